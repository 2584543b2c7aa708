vector<long long> topKFrequent(const vector<long long>& values, long long k) {
    unordered_map<long long, long long> counts;
    for (long long value : values) ++counts[value];
    vector<pair<long long, long long>> ranked;  // (-count, value): most frequent, then smaller value, first
    for (const auto& [value, count] : counts) ranked.push_back({-count, value});
    size_t keep = min<size_t>(max<long long>(k, 0), ranked.size());
    partial_sort(ranked.begin(), ranked.begin() + keep, ranked.end());
    vector<long long> best;
    for (size_t i = 0; i < keep; ++i) best.push_back(ranked[i].second);
    return best;
}
