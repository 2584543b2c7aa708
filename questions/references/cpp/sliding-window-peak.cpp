vector<long long> windowPeaks(const vector<long long>& loads, long long width) {
    // Indices whose loads decrease from front to back; the front is the window's peak.
    deque<long long> candidates;
    vector<long long> peaks;
    for (long long index = 0; index < (long long)loads.size(); ++index) {
        while (!candidates.empty() && loads[candidates.back()] <= loads[index]) candidates.pop_back();
        candidates.push_back(index);
        if (candidates.front() <= index - width) candidates.pop_front();
        if (index >= width - 1) peaks.push_back(loads[candidates.front()]);
    }
    return peaks;
}
