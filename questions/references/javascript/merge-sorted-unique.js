function mergeSortedUnique(first, second) {
  const merged = [];
  let i = 0;
  let j = 0;
  while (i < first.length || j < second.length) {
    const value = j === second.length || (i < first.length && first[i] <= second[j]) ? first[i++] : second[j++];
    if (merged.length === 0 || merged[merged.length - 1] !== value) merged.push(value);
  }
  return merged;
}
