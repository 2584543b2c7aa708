func longestDistinctWindow(text string) int64 {
	lastSeen := map[rune]int{}
	start, best := 0, 0
	for index, char := range []rune(text) {
		if last, ok := lastSeen[char]; ok && last >= start {
			start = last + 1
		}
		lastSeen[char] = index
		if index-start+1 > best {
			best = index - start + 1
		}
	}
	return int64(best)
}
