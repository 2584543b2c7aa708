class Solution {
    long countGapPairs(long[] values, long gap) {
        Map<Long, Integer> counts = new HashMap<>();
        for (long value : values) {
            counts.merge(value, 1, Integer::sum);
        }
        long pairs = 0;
        for (Map.Entry<Long, Integer> entry : counts.entrySet()) {
            long value = entry.getKey();
            if (gap == 0) {
                pairs += entry.getValue() > 1 ? 1 : 0;
                continue;
            }
            long partner = value + gap;
            boolean overflowed = ((value ^ partner) & (gap ^ partner)) < 0;
            if (!overflowed && counts.containsKey(partner)) {
                pairs++;
            }
        }
        return pairs;
    }
}
