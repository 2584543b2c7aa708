class Solution {
    long lowestBalance(long[] transactions) {
        long balance = 0, lowest = 0;
        for (long amount : transactions) {
            balance += amount;
            lowest = Math.min(lowest, balance);
        }
        return lowest;
    }
}
