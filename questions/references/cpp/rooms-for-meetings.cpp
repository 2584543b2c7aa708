long long roomsNeeded(const vector<vector<long long>>& meetings) {
    vector<vector<long long>> sorted = meetings;
    sort(sorted.begin(), sorted.end());
    priority_queue<long long, vector<long long>, greater<long long>> ends;  // rooms' end times
    for (const auto& meeting : sorted) {
        if (!ends.empty() && ends.top() <= meeting[0]) ends.pop();
        ends.push(meeting[1]);
    }
    return ends.size();
}
