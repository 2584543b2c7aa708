func editDistance(source string, target string) int64 {
	s, t := []rune(source), []rune(target)
	previous := make([]int64, len(t)+1)
	current := make([]int64, len(t)+1)
	for j := range previous {
		previous[j] = int64(j)
	}
	for i := 1; i <= len(s); i++ {
		current[0] = int64(i)
		for j := 1; j <= len(t); j++ {
			replace := previous[j-1]
			if s[i-1] != t[j-1] {
				replace++
			}
			current[j] = min(previous[j]+1, min(current[j-1]+1, replace))
		}
		previous, current = current, previous
	}
	return previous[len(t)]
}

func min(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}
