long long countGapPairs(const vector<long long>& values, long long gap) {
    unordered_map<long long, long long> counts;
    for (long long value : values) ++counts[value];
    long long pairs = 0;
    for (const auto& [value, count] : counts) {
        if (gap == 0 ? count > 1 : counts.count(value + gap) > 0) ++pairs;
    }
    return pairs;
}
