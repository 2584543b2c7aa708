class Solution {
    long insertPosition(long[] sortedValues, long target) {
        int low = 0, high = sortedValues.length;
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (sortedValues[middle] < target) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }
}
