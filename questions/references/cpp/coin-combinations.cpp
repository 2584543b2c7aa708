long long countCombinations(long long amount, const vector<long long>& coins) {
    vector<long long> ways(amount + 1, 0);
    ways[0] = 1;
    // Coins in the outer loop: each combination is counted once, in coin order.
    for (long long coin : coins) {
        for (long long total = coin; total <= amount; ++total) ways[total] += ways[total - coin];
    }
    return ways[amount];
}
