func lowestBalance(transactions []int64) int64 {
	var balance, lowest int64
	for _, amount := range transactions {
		balance += amount
		if balance < lowest {
			lowest = balance
		}
	}
	return lowest
}
