import "sort"

func mergeBusyBlocks(blocks [][]int64) [][]int64 {
	sorted := make([][]int64, len(blocks))
	copy(sorted, blocks)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i][0] != sorted[j][0] {
			return sorted[i][0] < sorted[j][0]
		}
		return sorted[i][1] < sorted[j][1]
	})
	merged := [][]int64{}
	for _, block := range sorted {
		start, end := block[0], block[1]
		if last := len(merged) - 1; last >= 0 && start <= merged[last][1] {
			if end > merged[last][1] {
				merged[last][1] = end
			}
		} else {
			merged = append(merged, []int64{start, end})
		}
	}
	return merged
}
