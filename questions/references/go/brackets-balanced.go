func bracketsBalanced(text string) bool {
	opening := map[rune]rune{')': '(', ']': '[', '}': '{'}
	var stack []rune
	for _, char := range text {
		switch char {
		case '(', '[', '{':
			stack = append(stack, char)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != opening[char] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0
}
