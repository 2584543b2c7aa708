long long insertPosition(const vector<long long>& sortedValues, long long target) {
    size_t low = 0, high = sortedValues.size();
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (sortedValues[middle] < target) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}
