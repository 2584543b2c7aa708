vector<double> runningMedians(const vector<long long>& values) {
    priority_queue<long long> lower;                                     // the smaller half
    priority_queue<long long, vector<long long>, greater<long long>> upper;  // the larger half
    vector<double> medians;
    medians.reserve(values.size());
    for (long long value : values) {
        if (!lower.empty() && value > lower.top()) {
            upper.push(value);
        } else {
            lower.push(value);
        }
        // Keep lower.size() == upper.size() or upper.size() + 1.
        if (lower.size() > upper.size() + 1) {
            upper.push(lower.top());
            lower.pop();
        } else if (upper.size() > lower.size()) {
            lower.push(upper.top());
            upper.pop();
        }
        if (lower.size() > upper.size()) {
            medians.push_back(lower.top());
        } else {
            medians.push_back((static_cast<double>(lower.top()) + upper.top()) / 2);
        }
    }
    return medians;
}
