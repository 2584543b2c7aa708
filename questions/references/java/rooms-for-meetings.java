class Solution {
    long roomsNeeded(long[][] meetings) {
        long[][] sorted = meetings.clone();
        Arrays.sort(sorted, Comparator.<long[]>comparingLong(m -> m[0]).thenComparingLong(m -> m[1]));
        PriorityQueue<Long> ends = new PriorityQueue<>();
        for (long[] meeting : sorted) {
            if (!ends.isEmpty() && ends.peek() <= meeting[0]) {
                ends.poll();
            }
            ends.add(meeting[1]);
        }
        return ends.size();
    }
}
