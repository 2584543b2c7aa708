long long sumOfList(const vector<long long>& numbers) {
    long long total = 0;
    for (long long number : numbers) total += number;
    return total;
}
