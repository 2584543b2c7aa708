class Solution {
    long countCombinations(long amount, long[] coins) {
        long[] ways = new long[(int) amount + 1];
        ways[0] = 1;
        // Coins in the outer loop: each combination is counted once, in coin order.
        for (long coin : coins) {
            for (int total = (int) coin; total <= amount; total++) {
                ways[total] += ways[total - (int) coin];
            }
        }
        return ways[(int) amount];
    }
}
