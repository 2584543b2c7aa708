function topKFrequent(values, k) {
  const counts = new Map();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts]
    .sort(([valueA, countA], [valueB, countB]) => countB - countA || valueA - valueB)
    .slice(0, k)
    .map(([value]) => value);
}
