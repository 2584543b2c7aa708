class Solution {
    long trappedWater(long[] heights) {
        int left = 0, right = heights.length - 1;
        long leftWall = 0, rightWall = 0, water = 0;
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
}
