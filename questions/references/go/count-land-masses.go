func countLandMasses(grid [][]int64) int64 {
	rows := len(grid)
	if rows == 0 {
		return 0
	}
	cols := len(grid[0])
	seen := make([][]bool, rows)
	for r := range seen {
		seen[r] = make([]bool, cols)
	}
	var masses int64
	type cell struct{ r, c int }
	for row := 0; row < rows; row++ {
		for col := 0; col < cols; col++ {
			if grid[row][col] != 1 || seen[row][col] {
				continue
			}
			masses++
			seen[row][col] = true
			frontier := []cell{{row, col}}
			for len(frontier) > 0 {
				here := frontier[len(frontier)-1]
				frontier = frontier[:len(frontier)-1]
				for _, next := range []cell{{here.r + 1, here.c}, {here.r - 1, here.c}, {here.r, here.c + 1}, {here.r, here.c - 1}} {
					if next.r >= 0 && next.r < rows && next.c >= 0 && next.c < cols &&
						grid[next.r][next.c] == 1 && !seen[next.r][next.c] {
						seen[next.r][next.c] = true
						frontier = append(frontier, next)
					}
				}
			}
		}
	}
	return masses
}
