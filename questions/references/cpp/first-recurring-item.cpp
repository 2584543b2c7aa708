optional<long long> firstRecurringItem(const vector<long long>& items) {
    unordered_set<long long> seen;
    for (long long item : items) {
        if (!seen.insert(item).second) return item;
    }
    return nullopt;
}
