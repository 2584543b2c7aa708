vector<vector<long long>> mergeBusyBlocks(const vector<vector<long long>>& blocks) {
    vector<vector<long long>> sorted = blocks, merged;
    sort(sorted.begin(), sorted.end());
    for (const auto& block : sorted) {
        if (!merged.empty() && block[0] <= merged.back()[1]) {
            merged.back()[1] = max(merged.back()[1], block[1]);
        } else {
            merged.push_back({block[0], block[1]});
        }
    }
    return merged;
}
