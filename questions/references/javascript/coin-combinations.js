function countCombinations(amount, coins) {
  const ways = new Array(amount + 1).fill(0);
  ways[0] = 1;
  // Coins in the outer loop: each combination is counted once, in coin order.
  for (const coin of coins) {
    for (let total = coin; total <= amount; total++) ways[total] += ways[total - coin];
  }
  return ways[amount];
}
