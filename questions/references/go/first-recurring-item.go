func firstRecurringItem(items []int64) *int64 {
	seen := make(map[int64]bool, len(items))
	for _, item := range items {
		if seen[item] {
			return &item
		}
		seen[item] = true
	}
	return nil
}
