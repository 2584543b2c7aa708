long long editDistance(string source, string target) {
    vector<long long> previous(target.size() + 1), current(target.size() + 1);
    iota(previous.begin(), previous.end(), 0);
    for (size_t i = 1; i <= source.size(); ++i) {
        current[0] = i;
        for (size_t j = 1; j <= target.size(); ++j) {
            current[j] = min({previous[j] + 1, current[j - 1] + 1,
                              previous[j - 1] + (source[i - 1] != target[j - 1])});
        }
        swap(previous, current);
    }
    return previous[target.size()];
}
