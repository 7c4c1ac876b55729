package py

// FileLines splits text the way iterating a Python text file opened with
// newline="" (or readlines() on one) does: a line ends after "\n", "\r\n"
// or a lone "\r", and keeps its terminator.
func FileLines(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			out = append(out, text[start:i+1])
			start = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			out = append(out, text[start:i+1])
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
