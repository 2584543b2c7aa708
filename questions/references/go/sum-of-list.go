func sumOfList(numbers []int64) int64 {
	var total int64
	for _, n := range numbers {
		total += n
	}
	return total
}
