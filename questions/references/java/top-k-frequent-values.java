class Solution {
    long[] topKFrequent(long[] values, long k) {
        Map<Long, Integer> counts = new HashMap<>();
        for (long value : values) {
            counts.merge(value, 1, Integer::sum);
        }
        return counts.entrySet().stream()
            .sorted(Map.Entry.<Long, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
            .limit(k)
            .mapToLong(Map.Entry::getKey)
            .toArray();
    }
}
