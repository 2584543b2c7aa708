import "container/heap"

// intHeap is a min-heap; the lower half is kept negated in one to make it a max-heap.
type intHeap []int64

func (h intHeap) Len() int            { return len(h) }
func (h intHeap) Less(i, j int) bool  { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x interface{}) { *h = append(*h, x.(int64)) }
func (h *intHeap) Pop() interface{} {
	old := *h
	last := old[len(old)-1]
	*h = old[:len(old)-1]
	return last
}

func runningMedians(values []int64) []float64 {
	lower, upper := &intHeap{}, &intHeap{}
	medians := make([]float64, 0, len(values))
	for _, value := range values {
		if lower.Len() > 0 && value > -(*lower)[0] {
			heap.Push(upper, value)
		} else {
			heap.Push(lower, -value)
		}
		// Keep lower.Len() == upper.Len() or upper.Len() + 1.
		if lower.Len() > upper.Len()+1 {
			heap.Push(upper, -heap.Pop(lower).(int64))
		} else if upper.Len() > lower.Len() {
			heap.Push(lower, -heap.Pop(upper).(int64))
		}
		if lower.Len() > upper.Len() {
			medians = append(medians, float64(-(*lower)[0]))
		} else {
			medians = append(medians, (float64(-(*lower)[0])+float64((*upper)[0]))/2)
		}
	}
	return medians
}
