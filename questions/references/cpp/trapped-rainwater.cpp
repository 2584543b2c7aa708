long long trappedWater(const vector<long long>& heights) {
    if (heights.empty()) return 0;
    size_t left = 0, right = heights.size() - 1;
    long long leftWall = 0, rightWall = 0, water = 0;
    // The lower side is bounded by its own wall: the other side has one at least as tall.
    while (left < right) {
        if (heights[left] < heights[right]) {
            leftWall = max(leftWall, heights[left]);
            water += leftWall - heights[left];
            ++left;
        } else {
            rightWall = max(rightWall, heights[right]);
            water += rightWall - heights[right];
            --right;
        }
    }
    return water;
}
