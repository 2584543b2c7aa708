func countCombinations(amount int64, coins []int64) int64 {
	ways := make([]int64, amount+1)
	ways[0] = 1
	// Coins in the outer loop: each combination is counted once, in coin order.
	for _, coin := range coins {
		for total := coin; total <= amount; total++ {
			ways[total] += ways[total-coin]
		}
	}
	return ways[amount]
}
