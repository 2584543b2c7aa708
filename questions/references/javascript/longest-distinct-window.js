function longestDistinctWindow(text) {
  const lastSeen = new Map();
  let start = 0;
  let best = 0;
  let index = 0;
  // for...of walks code points, so a character outside the BMP counts once.
  for (const char of text) {
    if (lastSeen.has(char) && lastSeen.get(char) >= start) start = lastSeen.get(char) + 1;
    lastSeen.set(char, index);
    best = Math.max(best, index - start + 1);
    index++;
  }
  return best;
}
