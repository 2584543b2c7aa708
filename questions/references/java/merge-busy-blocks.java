class Solution {
    long[][] mergeBusyBlocks(long[][] blocks) {
        long[][] sorted = blocks.clone();
        Arrays.sort(sorted, Comparator.<long[]>comparingLong(block -> block[0]).thenComparingLong(block -> block[1]));
        List<long[]> merged = new ArrayList<>();
        for (long[] block : sorted) {
            if (!merged.isEmpty() && block[0] <= merged.get(merged.size() - 1)[1]) {
                long[] last = merged.get(merged.size() - 1);
                last[1] = Math.max(last[1], block[1]);
            } else {
                merged.add(new long[] {block[0], block[1]});
            }
        }
        return merged.toArray(new long[0][]);
    }
}
