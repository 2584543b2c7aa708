function countLandMasses(grid) {
  const rows = grid.length;
  const cols = rows ? grid[0].length : 0;
  const seen = Array.from({ length: rows }, () => new Array(cols).fill(false));
  let masses = 0;
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      if (grid[row][col] !== 1 || seen[row][col]) continue;
      masses++;
      seen[row][col] = true;
      const frontier = [[row, col]];
      while (frontier.length) {
        const [r, c] = frontier.pop();
        for (const [nr, nc] of [[r + 1, c], [r - 1, c], [r, c + 1], [r, c - 1]]) {
          if (nr >= 0 && nr < rows && nc >= 0 && nc < cols && grid[nr][nc] === 1 && !seen[nr][nc]) {
            seen[nr][nc] = true;
            frontier.push([nr, nc]);
          }
        }
      }
    }
  }
  return masses;
}
