function trappedWater(heights) {
  let left = 0;
  let right = heights.length - 1;
  let leftWall = 0;
  let rightWall = 0;
  let water = 0;
  // The lower side is bounded by its own wall: the other side has one at least as tall.
  while (left < right) {
    if (heights[left] < heights[right]) {
      leftWall = Math.max(leftWall, heights[left]);
      water += leftWall - heights[left++];
    } else {
      rightWall = Math.max(rightWall, heights[right]);
      water += rightWall - heights[right--];
    }
  }
  return water;
}
