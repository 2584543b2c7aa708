class Solution {
    Long firstRecurringItem(long[] items) {
        Set<Long> seen = new HashSet<>();
        for (long item : items) {
            if (!seen.add(item)) {
                return item;
            }
        }
        return null;
    }
}
