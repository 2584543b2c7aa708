vector<long long> daysUntilWarmer(const vector<long long>& temperatures) {
    vector<long long> waits(temperatures.size(), 0);
    vector<size_t> pending;  // days still waiting, their temperatures not increasing
    for (size_t day = 0; day < temperatures.size(); ++day) {
        while (!pending.empty() && temperatures[pending.back()] < temperatures[day]) {
            waits[pending.back()] = day - pending.back();
            pending.pop_back();
        }
        pending.push_back(day);
    }
    return waits;
}
