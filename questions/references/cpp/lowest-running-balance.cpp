long long lowestBalance(const vector<long long>& transactions) {
    long long balance = 0, lowest = 0;
    for (long long amount : transactions) {
        balance += amount;
        lowest = min(lowest, balance);
    }
    return lowest;
}
