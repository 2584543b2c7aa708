class Solution {
    long cheapestTrip(long cityCount, long[][] flights, long origin, long destination, long maxStops) {
        long unreachable = Long.MAX_VALUE;
        long[] cost = new long[(int) cityCount];
        Arrays.fill(cost, unreachable);
        cost[(int) origin] = 0;
        // Round r allows r flights; reading last round's costs keeps a round to one more flight.
        for (long round = 0; round <= maxStops; round++) {
            long[] previous = cost.clone();
            for (long[] flight : flights) {
                int start = (int) flight[0], end = (int) flight[1];
                if (previous[start] != unreachable && previous[start] + flight[2] < cost[end]) {
                    cost[end] = previous[start] + flight[2];
                }
            }
        }
        return cost[(int) destination] == unreachable ? -1 : cost[(int) destination];
    }
}
