function insertPosition(sortedValues, target) {
  let low = 0;
  let high = sortedValues.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sortedValues[middle] < target) low = middle + 1;
    else high = middle;
  }
  return low;
}
