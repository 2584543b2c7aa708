class Solution {
    long longestRising(long[] values) {
        // smallestTail[k] is the smallest last value of any rising subsequence of length k + 1.
        long[] smallestTail = new long[values.length];
        int length = 0;
        for (long value : values) {
            int low = 0, high = length;
            while (low < high) {
                int middle = (low + high) >>> 1;
                if (smallestTail[middle] < value) {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            smallestTail[low] = value;
            if (low == length) {
                length++;
            }
        }
        return length;
    }
}
