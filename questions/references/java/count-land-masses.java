class Solution {
    long countLandMasses(long[][] grid) {
        int rows = grid.length;
        int cols = rows > 0 ? grid[0].length : 0;
        boolean[][] seen = new boolean[rows][cols];
        int[][] steps = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        long masses = 0;
        for (int row = 0; row < rows; row++) {
            for (int col = 0; col < cols; col++) {
                if (grid[row][col] != 1 || seen[row][col]) {
                    continue;
                }
                masses++;
                seen[row][col] = true;
                Deque<int[]> frontier = new ArrayDeque<>();
                frontier.push(new int[] {row, col});
                while (!frontier.isEmpty()) {
                    int[] cell = frontier.pop();
                    for (int[] step : steps) {
                        int r = cell[0] + step[0], c = cell[1] + step[1];
                        if (r >= 0 && r < rows && c >= 0 && c < cols && grid[r][c] == 1 && !seen[r][c]) {
                            seen[r][c] = true;
                            frontier.push(new int[] {r, c});
                        }
                    }
                }
            }
        }
        return masses;
    }
}
