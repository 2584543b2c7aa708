func insertPosition(sortedValues []int64, target int64) int64 {
	low, high := 0, len(sortedValues)
	for low < high {
		middle := low + (high-low)/2
		if sortedValues[middle] < target {
			low = middle + 1
		} else {
			high = middle
		}
	}
	return int64(low)
}
