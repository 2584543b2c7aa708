func windowPeaks(loads []int64, width int64) []int64 {
	// Indices whose loads decrease from front to back; the front is the window's peak.
	var candidates []int
	peaks := []int64{}
	for index, load := range loads {
		for len(candidates) > 0 && loads[candidates[len(candidates)-1]] <= load {
			candidates = candidates[:len(candidates)-1]
		}
		candidates = append(candidates, index)
		if int64(candidates[0]) <= int64(index)-width {
			candidates = candidates[1:]
		}
		if int64(index) >= width-1 {
			peaks = append(peaks, loads[candidates[0]])
		}
	}
	return peaks
}
