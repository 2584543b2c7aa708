import "sort"

func topKFrequent(values []int64, k int64) []int64 {
	counts := make(map[int64]int)
	for _, value := range values {
		counts[value]++
	}
	distinct := make([]int64, 0, len(counts))
	for value := range counts {
		distinct = append(distinct, value)
	}
	// Most frequent first, ties by the smaller value.
	sort.Slice(distinct, func(i, j int) bool {
		a, b := distinct[i], distinct[j]
		if counts[a] != counts[b] {
			return counts[a] > counts[b]
		}
		return a < b
	})
	if k < int64(len(distinct)) {
		distinct = distinct[:k]
	}
	return distinct
}
