long long longestDistinctWindow(string text) {
    unordered_map<char, long long> lastSeen;
    long long start = 0, best = 0;
    for (long long index = 0; index < (long long)text.size(); ++index) {
        auto found = lastSeen.find(text[index]);
        if (found != lastSeen.end() && found->second >= start) start = found->second + 1;
        lastSeen[text[index]] = index;
        best = max(best, index - start + 1);
    }
    return best;
}
