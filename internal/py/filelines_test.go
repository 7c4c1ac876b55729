package py

import (
	"reflect"
	"testing"
)

// TestFileLines pins FileLines to io.StringIO(s, newline="").readlines()
// (values from python3).
func TestFileLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\nb\r\nc\rd", []string{"a\n", "b\r\n", "c\r", "d"}},
		{"\r\r\n\n", []string{"\r", "\r\n", "\n"}},
		{"x\x0by\x0cz\n", []string{"x\x0by\x0cz\n"}},
		{"café\r\n", []string{"café\r\n"}},
	} {
		if got := FileLines(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("FileLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
