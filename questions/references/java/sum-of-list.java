class Solution {
    long sumOfList(long[] numbers) {
        long total = 0;
        for (long number : numbers) {
            total += number;
        }
        return total;
    }
}
