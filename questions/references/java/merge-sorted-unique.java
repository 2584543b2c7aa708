class Solution {
    long[] mergeSortedUnique(long[] first, long[] second) {
        long[] merged = new long[first.length + second.length];
        int size = 0, i = 0, j = 0;
        while (i < first.length || j < second.length) {
            long value;
            if (j == second.length || (i < first.length && first[i] <= second[j])) {
                value = first[i++];
            } else {
                value = second[j++];
            }
            if (size == 0 || merged[size - 1] != value) {
                merged[size++] = value;
            }
        }
        return Arrays.copyOf(merged, size);
    }
}
