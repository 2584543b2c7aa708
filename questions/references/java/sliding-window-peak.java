class Solution {
    long[] windowPeaks(long[] loads, long width) {
        // Indices whose loads decrease from front to back; the front is the window's peak.
        Deque<Integer> candidates = new ArrayDeque<>();
        long[] peaks = new long[Math.max(0, loads.length - (int) width + 1)];
        int count = 0;
        for (int index = 0; index < loads.length; index++) {
            while (!candidates.isEmpty() && loads[candidates.peekLast()] <= loads[index]) {
                candidates.pollLast();
            }
            candidates.addLast(index);
            if (candidates.peekFirst() <= index - width) {
                candidates.pollFirst();
            }
            if (index >= width - 1) {
                peaks[count++] = loads[candidates.peekFirst()];
            }
        }
        return peaks;
    }
}
