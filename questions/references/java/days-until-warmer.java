class Solution {
    long[] daysUntilWarmer(long[] temperatures) {
        long[] waits = new long[temperatures.length];
        Deque<Integer> pending = new ArrayDeque<>();
        for (int day = 0; day < temperatures.length; day++) {
            while (!pending.isEmpty() && temperatures[pending.peek()] < temperatures[day]) {
                int earlier = pending.pop();
                waits[earlier] = day - earlier;
            }
            pending.push(day);
        }
        return waits;
    }
}
