long long cheapestTrip(long long cityCount, const vector<vector<long long>>& flights, long long origin,
                       long long destination, long long maxStops) {
    const long long unreachable = LLONG_MAX;
    vector<long long> cost(cityCount, unreachable);
    cost[origin] = 0;
    // Round r allows r flights; reading last round's costs keeps a round to one more flight.
    for (long long round = 0; round <= maxStops; ++round) {
        vector<long long> previous = cost;
        for (const auto& flight : flights) {
            long long start = flight[0], end = flight[1], price = flight[2];
            if (previous[start] != unreachable && previous[start] + price < cost[end]) {
                cost[end] = previous[start] + price;
            }
        }
    }
    return cost[destination] == unreachable ? -1 : cost[destination];
}
