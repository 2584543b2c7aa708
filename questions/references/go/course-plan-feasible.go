func canCompleteAll(courseCount int64, prerequisites [][]int64) bool {
	unlocks := make([][]int64, courseCount)
	waitingOn := make([]int, courseCount)
	for _, pair := range prerequisites {
		course, needed := pair[0], pair[1]
		unlocks[needed] = append(unlocks[needed], course)
		waitingOn[course]++
	}
	var ready []int64
	for course := int64(0); course < courseCount; course++ {
		if waitingOn[course] == 0 {
			ready = append(ready, course)
		}
	}
	completed := int64(0)
	for len(ready) > 0 {
		course := ready[0]
		ready = ready[1:]
		completed++
		for _, next := range unlocks[course] {
			waitingOn[next]--
			if waitingOn[next] == 0 {
				ready = append(ready, next)
			}
		}
	}
	return completed == courseCount
}
