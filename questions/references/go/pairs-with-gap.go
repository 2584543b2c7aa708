func countGapPairs(values []int64, gap int64) int64 {
	counts := make(map[int64]int, len(values))
	for _, value := range values {
		counts[value]++
	}
	var pairs int64
	for value, count := range counts {
		if gap == 0 {
			if count > 1 {
				pairs++
			}
		} else if _, ok := counts[value+gap]; ok {
			pairs++
		}
	}
	return pairs
}
