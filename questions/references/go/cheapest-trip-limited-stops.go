import "math"

func cheapestTrip(cityCount int64, flights [][]int64, origin int64, destination int64, maxStops int64) int64 {
	const unreachable = math.MaxInt64
	cost := make([]int64, cityCount)
	for i := range cost {
		cost[i] = unreachable
	}
	cost[origin] = 0
	// Round r allows r flights; reading last round's costs keeps a round to one more flight.
	previous := make([]int64, cityCount)
	for round := int64(0); round <= maxStops; round++ {
		copy(previous, cost)
		for _, flight := range flights {
			start, end, price := flight[0], flight[1], flight[2]
			if previous[start] != unreachable && previous[start]+price < cost[end] {
				cost[end] = previous[start] + price
			}
		}
	}
	if cost[destination] == unreachable {
		return -1
	}
	return cost[destination]
}
