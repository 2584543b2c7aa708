long long countLandMasses(const vector<vector<long long>>& grid) {
    int rows = grid.size(), cols = rows ? grid[0].size() : 0;
    vector<vector<bool>> seen(rows, vector<bool>(cols, false));
    long long masses = 0;
    const int steps[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < cols; ++col) {
            if (grid[row][col] != 1 || seen[row][col]) continue;
            ++masses;
            seen[row][col] = true;
            vector<pair<int, int>> frontier = {{row, col}};
            while (!frontier.empty()) {
                auto [r, c] = frontier.back();
                frontier.pop_back();
                for (const auto& step : steps) {
                    int nr = r + step[0], nc = c + step[1];
                    if (nr >= 0 && nr < rows && nc >= 0 && nc < cols && grid[nr][nc] == 1 && !seen[nr][nc]) {
                        seen[nr][nc] = true;
                        frontier.push_back({nr, nc});
                    }
                }
            }
        }
    }
    return masses;
}
