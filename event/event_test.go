package event

import (
	"errors"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
)

func TestStamp(t *testing.T) {
	// Expected values were produced by CPython's datetime.isoformat().
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 3, 2, 47, 987634000, time.UTC), "2026-11-22T03:02:47.987634"},
		{time.Date(2026, 11, 22, 3, 2, 47, 0, time.UTC), "2026-11-22T03:02:47"},
		{time.Date(2026, 1, 2, 3, 4, 5, 1000, time.UTC), "2026-01-02T03:04:05.000001"},
		{time.Date(999, 1, 2, 3, 4, 5, 100000000, time.UTC), "0999-01-02T03:04:05.100000"},
		// Sub-microsecond digits are dropped; only nanoseconds means zero µs.
		{time.Date(2026, 1, 2, 3, 4, 5, 999, time.UTC), "2026-01-02T03:04:05"},
		{time.Date(2026, 1, 2, 3, 4, 5, 1999, time.UTC), "2026-01-02T03:04:05.000001"},
		// Converted to UTC like utcnow().
		{time.Date(2026, 1, 2, 5, 4, 5, 0, time.FixedZone("X", 2*3600)), "2026-01-02T03:04:05"},
	}
	for _, tc := range tests {
		if got := Stamp(tc.in); got != tc.want {
			t.Errorf("Stamp(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTagify(t *testing.T) {
	// Expected values were produced by salt.utils.event.tagify.
	tests := []struct {
		suffix any
		prefix string
		want   string
	}{
		{[]any{"a", int64(1), nil, []byte("x")}, "job", "salt/job/a/1/None/x"},
		{"x", "", "salt/x"},
		{"", "wheel", "salt/wheel"},
		{int64(0), "x", "salt/x/0"},
		{[]string{"20260101", "ret", "m1"}, "job", "salt/job/20260101/ret/m1"},
		{[]any{"jid", "", "new"}, "run", "salt/run/jid/new"},
		{"start", "custom/prefix", "salt/custom/prefix/start"},
		{true, "b", "salt/b/True"},
	}
	for _, tc := range tests {
		if got := Tagify(tc.suffix, tc.prefix); got != tc.want {
			t.Errorf("Tagify(%#v, %q) = %q, want %q", tc.suffix, tc.prefix, got, tc.want)
		}
	}
}

func TestGlobMatchesPythonFnmatch(t *testing.T) {
	// [pattern, tag, fnmatch.fnmatch(tag, pattern)] from CPython 3.11.
	tests := []struct {
		pat, tag string
		want     bool
	}{
		{"salt/job/*/ret/*", "salt/job/123/ret/m1", true},
		{"salt/job/*/ret/*", "salt/job/123/new", false},
		{"salt/job/*", "salt/job/1/ret/x/y", true},
		{"salt/*/start", "salt/minion/m1/start", true},
		{"salt/minion/?1/start", "salt/minion/m1/start", true},
		{"salt/minion/?/start", "salt/minion/m1/start", false},
		{"*", "", true},
		{"", "", true},
		{"", "a", false},
		{"a[bc]d", "abd", true},
		{"a[bc]d", "aed", false},
		{"a[!bc]d", "aed", true},
		{"a[!bc]d", "abd", false},
		{"a[b-d]e", "ace", true},
		{"a[b-d]e", "aee", false},
		{"a[z-a]e", "aze", false},
		{"a[z-a]e", "a-e", false},
		{"a[!z-a]e", "aqe", true},
		{"a[]]b", "a]b", true},
		{"a[!]]b", "a]b", false},
		{"a[!]]b", "axb", true},
		{"a[-]b", "a-b", true},
		{"a[b-]c", "a-c", true},
		{"a[b-]c", "abc", true},
		{"a[b-]c", "acc", false},
		{"a[--0]b", "a.b", true},
		{"a[--0]b", "a1b", false},
		{"a[b", "a[b", true},
		{"a[b", "ab", false},
		{"a[^b]c", "a^c", true},
		{"a[^b]c", "abc", true},
		{"a[^b]c", "axc", false},
		{`a\b`, `a\b`, true},
		{`a[\]b`, `a\b`, true},
		{"a.b", "a.b", true},
		{"a.b", "axb", false},
		{"a(b)+", "a(b)+", true},
		{"a|b", "a", false},
		{"*a*b*", "xxaxxbxx", true},
		{"*a*b*", "xxbxxaxx", false},
		{"a[!z-ab-c]d", "abd", false},
		{"a[!z-ab-c]d", "aad", true},
		{"a[!z-ab-c]d", "azd", true},
		{"a[a-c-e]f", "a-f", true},
		{"a[a-c-e]f", "adf", false},
		{"a[a-c-e]f", "aef", true},
		{"a[!-a]b", "a-b", false},
		{"a[!-a]b", "axb", true},
		{"a*", "a\nb", true},
		{"a?b", "a\nb", true},
		{"é[é-ê]*", "éêx", true},
		{"[[:alpha:]]", "a]", true},
		{"[[:alpha:]]", "a", false},
		{"a[&&b]c", "a&c", true},
		{"a[~~]c", "a~c", true},
		{"a*[", "abc[", true},
	}
	for _, tc := range tests {
		m, err := Glob(tc.pat)
		if err != nil {
			t.Errorf("Glob(%q): %v", tc.pat, err)
			continue
		}
		if got := m.Match(tc.tag); got != tc.want {
			re, _ := py.FnmatchTranslate(tc.pat)
			t.Errorf("Glob(%q).Match(%q) = %v, want %v (regexp %s)", tc.pat, tc.tag, got, tc.want, re)
		}
	}
}

func TestMatchers(t *testing.T) {
	tests := []struct {
		typ, tag, event string
		want            bool
	}{
		{"", "salt/job/", "salt/job/1/new", true},
		{"startswith", "salt/job/", "salt/run/1/new", false},
		{"startswith", "", "anything", true},
		{"endswith", "/new", "salt/job/1/new", true},
		{"endswith", "/new", "salt/job/1/ret/m", false},
		{"find", "/ret/", "salt/job/1/ret/m", true},
		{"find", "/ret/", "salt/job/1/new", false},
		// Regex results from Python's re.compile("^" + expr).search(tag).
		{"regex", `salt/job/\d+/ret`, "salt/job/123/ret/m1", true},
		{"regex", "job", "salt/job", false},
		{"regex", "a|b", "xb", true},
		{"regex", "salt/(job|run)/", "salt/run/1", true},
		{"regex", "", "anything", true},
		{"regex", `salt/job/\d+/ret$`, "salt/job/1/ret/m", false},
		{"fnmatch", "salt/job/*/ret/*", "salt/job/1/ret/m", true},
		{"fnmatch", "salt/job/*/ret/*", "salt/job/1/new", false},
	}
	for _, tc := range tests {
		m, err := NewMatcher(tc.typ, tc.tag)
		if err != nil {
			t.Errorf("NewMatcher(%q, %q): %v", tc.typ, tc.tag, err)
			continue
		}
		if got := m.Match(tc.event); got != tc.want {
			t.Errorf("%s %q on %q = %v, want %v", tc.typ, tc.tag, tc.event, got, tc.want)
		}
	}
	if _, err := NewMatcher("regex", "("); err == nil {
		t.Error("bad regex accepted")
	}
	if _, err := NewMatcher("nope", "x"); err == nil {
		t.Error("unknown match type accepted")
	}
}

func TestCheckTag(t *testing.T) {
	if err := checkTag(""); !errors.Is(err, ErrEmptyTag) {
		t.Errorf("empty tag: %v", err)
	}
	if err := checkTag("a\n\nb"); !errors.Is(err, ErrBadTag) {
		t.Errorf("separator in tag: %v", err)
	}
	if err := checkTag("a\nb"); err != nil {
		t.Errorf("single newline refused: %v", err)
	}
}

// BenchmarkStamp is the _stamp of every event the master fires (one per
// return).
func BenchmarkStamp(b *testing.B) {
	t := time.Date(2026, 11, 22, 3, 2, 47, 987634000, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_ = Stamp(t)
	}
}
