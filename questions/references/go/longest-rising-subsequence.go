import "sort"

func longestRising(values []int64) int64 {
	// smallestTail[k] is the smallest last value of any rising subsequence of length k + 1.
	var smallestTail []int64
	for _, value := range values {
		position := sort.Search(len(smallestTail), func(i int) bool { return smallestTail[i] >= value })
		if position == len(smallestTail) {
			smallestTail = append(smallestTail, value)
		} else {
			smallestTail[position] = value
		}
	}
	return int64(len(smallestTail))
}
