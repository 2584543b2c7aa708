func daysUntilWarmer(temperatures []int64) []int64 {
	waits := make([]int64, len(temperatures))
	var pending []int // days still waiting, their temperatures falling
	for day, temperature := range temperatures {
		for len(pending) > 0 && temperatures[pending[len(pending)-1]] < temperature {
			earlier := pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			waits[earlier] = int64(day - earlier)
		}
		pending = append(pending, day)
	}
	return waits
}
