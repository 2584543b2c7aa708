function longestRising(values) {
  // smallestTail[k] is the smallest last value of any rising subsequence of length k + 1.
  const smallestTail = [];
  for (const value of values) {
    let low = 0;
    let high = smallestTail.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (smallestTail[middle] < value) low = middle + 1;
      else high = middle;
    }
    smallestTail[low] = value;
  }
  return smallestTail.length;
}
