func trappedWater(heights []int64) int64 {
	left, right := 0, len(heights)-1
	var leftWall, rightWall, water int64
	// The lower side is bounded by its own wall: the other side has one at least as tall.
	for left < right {
		if heights[left] < heights[right] {
			if heights[left] > leftWall {
				leftWall = heights[left]
			}
			water += leftWall - heights[left]
			left++
		} else {
			if heights[right] > rightWall {
				rightWall = heights[right]
			}
			water += rightWall - heights[right]
			right--
		}
	}
	return water
}
