import (
	"container/heap"
	"sort"
)

// endTimes is a min-heap of the end times of the rooms in use.
type endTimes []int64

func (h endTimes) Len() int            { return len(h) }
func (h endTimes) Less(i, j int) bool  { return h[i] < h[j] }
func (h endTimes) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *endTimes) Push(x interface{}) { *h = append(*h, x.(int64)) }
func (h *endTimes) Pop() interface{} {
	old := *h
	last := old[len(old)-1]
	*h = old[:len(old)-1]
	return last
}

func roomsNeeded(meetings [][]int64) int64 {
	sorted := make([][]int64, len(meetings))
	copy(sorted, meetings)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i][0] != sorted[j][0] {
			return sorted[i][0] < sorted[j][0]
		}
		return sorted[i][1] < sorted[j][1]
	})
	ends := &endTimes{}
	for _, meeting := range sorted {
		start, end := meeting[0], meeting[1]
		if ends.Len() > 0 && (*ends)[0] <= start {
			(*ends)[0] = end // the room that frees first hosts this meeting
			heap.Fix(ends, 0)
		} else {
			heap.Push(ends, end)
		}
	}
	return int64(ends.Len())
}
