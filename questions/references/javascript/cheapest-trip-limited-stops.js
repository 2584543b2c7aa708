function cheapestTrip(cityCount, flights, origin, destination, maxStops) {
  let cost = new Array(cityCount).fill(Infinity);
  cost[origin] = 0;
  // Round r allows r flights; reading last round's costs keeps a round to one more flight.
  for (let round = 0; round <= maxStops; round++) {
    const previous = cost.slice();
    for (const [start, end, price] of flights) {
      if (previous[start] + price < cost[end]) cost[end] = previous[start] + price;
    }
  }
  return cost[destination] === Infinity ? -1 : cost[destination];
}
