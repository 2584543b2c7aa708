bool canCompleteAll(long long courseCount, const vector<vector<long long>>& prerequisites) {
    vector<vector<int>> unlocks(courseCount);
    vector<int> waitingOn(courseCount, 0);
    for (const auto& pair : prerequisites) {
        unlocks[pair[1]].push_back(pair[0]);
        ++waitingOn[pair[0]];
    }
    queue<int> ready;
    for (int course = 0; course < courseCount; ++course) {
        if (waitingOn[course] == 0) ready.push(course);
    }
    long long completed = 0;
    while (!ready.empty()) {
        int course = ready.front();
        ready.pop();
        ++completed;
        for (int next : unlocks[course]) {
            if (--waitingOn[next] == 0) ready.push(next);
        }
    }
    return completed == courseCount;
}
