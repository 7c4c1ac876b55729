package pillar

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestStackGlob checks pyGlob against what Python 3's glob.glob gave for
// the same tree (hidden names skipped by wildcards, [!...] classes, "**"
// as "*", trailing slashes), and pySplitLines against str.splitlines.
func TestStackGlob(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"d/a.yml", "d/b.yml", "d/.h.yml", "d/c.txt", "d/sub/x.yml", "d/ab.yml"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"d/*.yml", []string{"d/a.yml", "d/ab.yml", "d/b.yml"}},
		{"d/[!a]*.yml", []string{"d/b.yml"}},
		{"d/.*.yml", []string{"d/.h.yml"}},
		{"d/*/*.yml", []string{"d/sub/x.yml"}},
		{"d/**/*.yml", []string{"d/sub/x.yml"}},
		{"d/a?.yml", []string{"d/ab.yml"}},
		{"d/nope.yml", nil},
		{"d/a.yml", []string{"d/a.yml"}},
		{"d/sub/", []string{"d/sub/"}},
		{"d/*/", []string{"d/sub/"}},
	} {
		got := pyGlob(pyJoin(dir, tc.pattern))
		for i, g := range got {
			got[i] = strings.TrimPrefix(g, dir+"/")
		}
		sort.Strings(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("glob %q = %q, want %q", tc.pattern, got, tc.want)
		}
	}
	if got, want := pySplitLines("a\r\nb\vc\u2028d\n"), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("splitlines = %q, want %q", got, want)
	}
}
