package target

import (
	"errors"
	"testing"
)

func TestPCREMatch(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"web", "web01", true}, // anchored at the start only
		{"01", "web01", false},
		{"web\\d+$", "web01", true},
		{"web\\d+$", "web01\n", true}, // $ also matches before a final newline
		{"web\\d+$", "web01\n\n", false},
		{"web\\d+\\Z", "web01\n", false},
		{"(?i)WEB", "web01", true},
		{"(?i:W)eb", "web", true},
		{"(?P<n>web)\\d", "web1", true},
		{"\\d", "٣", true}, // Unicode digits, like Python 3 str patterns
		{"(?a)\\d", "٣", false},
		{"\\w+$", "é_1", true},
		{"\\s", "\x1c", true},
		{"\\s", "\u00a0", true},
		{"\\S", "\u00a0", false},
		{"[\\s]", "\v", true},
		{"[^\\S]", " ", true},
		{"\\W", "é", false},
		{"[^\\W]", "é", true},
		{"[\\W.]", "-", true},
		{"[\\W.]", "a", false},
		{"a{,2}b", "aab", true},
		{"a{,}b", "aaab", true},
		{"a{}", "a{}", true}, // literal braces
		{"a{x}", "a{x}", true},
		{"[[:alpha:]]", ":]", true}, // no POSIX classes in Python
		{"[[:alpha:]]", "b", false},
		{"[[:alpha:]]", "[]", true},
		{"\\x41\\101\\u0042\\U00000043", "AABC", true},
		{"\\0", "\x00", true},
		{"[\\b]", "\b", true},
		{"(?x) w e b  # comment", "web", true},
		{"a(?#comment)b", "ab", true},
		{"a|b", "b", true},
		{"^$", "", true},
		{"", "anything", true},
		{"(?m)a$", "a\nb", true},
		{"a.c", "a\nc", false},
		{"(?s)a.c", "a\nc", true},
		{"\\.", ".", true},
		{"\\é", "é", true},
	}
	m := New(Options{})
	for _, tc := range tests {
		got, err := m.PCREMatch(tc.pat, tc.s)
		if err != nil {
			t.Errorf("PCREMatch(%q, %q): %v", tc.pat, tc.s, err)
			continue
		}
		if got != tc.want {
			src, _ := TranslatePCRE(tc.pat)
			t.Errorf("PCREMatch(%q, %q) = %v, want %v (RE2 %s)", tc.pat, tc.s, got, tc.want, src)
		}
	}
}

func TestTranslatePCREErrors(t *testing.T) {
	unsupported := []string{
		"(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "(a)\\1", "(?P<x>a)(?P=x)", "(?(1)a|b)", "(?>a)", "a*+", "a++",
		"\\N{EM DASH}", "[^\\W\\d]", "a{1001}", "(?x:a b)",
	}
	for _, p := range unsupported {
		if _, err := TranslatePCRE(p); err == nil {
			// some are only detected by RE2 itself
			_, err = compilePCRE(p)
			if !errors.Is(err, ErrUnsupportedRegex) {
				t.Errorf("%q: err %v, want ErrUnsupportedRegex", p, err)
			}
		} else if !errors.Is(err, ErrUnsupportedRegex) {
			t.Errorf("%q: err %v, want ErrUnsupportedRegex", p, err)
		}
	}
	invalid := []string{
		"(", ")", "a)", "[a", "\\", "\\z", "\\p{L}", "\\e", "\\x4", "\\u12", "*a", "a**", "^*", "$+", "\\b?",
		"a|*", "(?i", "a(?i)", "((?i)a)", "(?L)a", "(?au)a", "(?-a:a)", "(?i-i:a)", "(?<n>a)", "(?Q)", "[z-a]",
		"[\\d-z]", "\\400", "a{2,1}", "(?P<1a>x)",
	}
	for _, p := range invalid {
		_, err := compilePCRE(p)
		if !errors.Is(err, ErrInvalidRegex) {
			t.Errorf("%q: err %v, want ErrInvalidRegex", p, err)
		}
	}
}
