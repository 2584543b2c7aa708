function lowestBalance(transactions) {
  let balance = 0;
  let lowest = 0;
  for (const amount of transactions) {
    balance += amount;
    lowest = Math.min(lowest, balance);
  }
  return lowest;
}
