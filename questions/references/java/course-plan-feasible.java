class Solution {
    boolean canCompleteAll(long courseCount, long[][] prerequisites) {
        int n = (int) courseCount;
        List<List<Integer>> unlocks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            unlocks.add(new ArrayList<>());
        }
        int[] waitingOn = new int[n];
        for (long[] pair : prerequisites) {
            unlocks.get((int) pair[1]).add((int) pair[0]);
            waitingOn[(int) pair[0]]++;
        }
        Deque<Integer> ready = new ArrayDeque<>();
        for (int course = 0; course < n; course++) {
            if (waitingOn[course] == 0) {
                ready.add(course);
            }
        }
        int completed = 0;
        while (!ready.isEmpty()) {
            int course = ready.poll();
            completed++;
            for (int next : unlocks.get(course)) {
                if (--waitingOn[next] == 0) {
                    ready.add(next);
                }
            }
        }
        return completed == n;
    }
}
