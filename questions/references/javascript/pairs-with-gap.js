function countGapPairs(values, gap) {
  const counts = new Map();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  let pairs = 0;
  for (const [value, count] of counts) {
    if (gap === 0 ? count > 1 : counts.has(value + gap)) pairs++;
  }
  return pairs;
}
