import (
	"strconv"
	"strings"
)

func compressRuns(text string) string {
	chars := []rune(text)
	var out strings.Builder
	start := 0
	for index := 1; index <= len(chars); index++ {
		if index == len(chars) || chars[index] != chars[start] {
			out.WriteRune(chars[start])
			if length := index - start; length > 1 {
				out.WriteString(strconv.Itoa(length))
			}
			start = index
		}
	}
	return out.String()
}
