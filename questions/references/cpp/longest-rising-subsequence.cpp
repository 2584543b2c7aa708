long long longestRising(const vector<long long>& values) {
    // smallestTail[k] is the smallest last value of any rising subsequence of length k + 1.
    vector<long long> smallestTail;
    for (long long value : values) {
        auto position = lower_bound(smallestTail.begin(), smallestTail.end(), value);
        if (position == smallestTail.end()) {
            smallestTail.push_back(value);
        } else {
            *position = value;
        }
    }
    return smallestTail.size();
}
