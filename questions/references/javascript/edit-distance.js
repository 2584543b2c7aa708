function editDistance(source, target) {
  // Two rows of the table: previous[j] is the distance from source[..i-1] to target[..j].
  let previous = Array.from({ length: target.length + 1 }, (_, j) => j);
  let current = new Array(target.length + 1).fill(0);
  for (let i = 1; i <= source.length; i++) {
    current[0] = i;
    for (let j = 1; j <= target.length; j++) {
      const replace = previous[j - 1] + (source[i - 1] === target[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, replace);
    }
    [previous, current] = [current, previous];
  }
  return previous[target.length];
}
