func mergeSortedUnique(first []int64, second []int64) []int64 {
	merged := make([]int64, 0, len(first)+len(second))
	i, j := 0, 0
	for i < len(first) || j < len(second) {
		var value int64
		if j == len(second) || (i < len(first) && first[i] <= second[j]) {
			value = first[i]
			i++
		} else {
			value = second[j]
			j++
		}
		if len(merged) == 0 || merged[len(merged)-1] != value {
			merged = append(merged, value)
		}
	}
	return merged
}
