vector<long long> mergeSortedUnique(const vector<long long>& first, const vector<long long>& second) {
    vector<long long> merged;
    size_t i = 0, j = 0;
    while (i < first.size() || j < second.size()) {
        long long value;
        if (j == second.size() || (i < first.size() && first[i] <= second[j])) {
            value = first[i++];
        } else {
            value = second[j++];
        }
        if (merged.empty() || merged.back() != value) merged.push_back(value);
    }
    return merged;
}
