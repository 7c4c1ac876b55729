package fileserver_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// bigText is big.txt: 2500 bytes, served in three chunks of 1000.
var bigText = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 2500; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 10))
		b.WriteString("\n")
	}
	return b.String()[:2500]
}()

// buildTree creates the test tree under base:
//
//	srv/base1   top.sls a.sls big.txt empty.txt dup.txt ignored.bak
//	            "with space.txt" ünï.txt .git/config secretdir/s.txt
//	            sub/{b.txt,x.bak,deep/c.txt,deep/emptyd/} emptydir/
//	            links: inlink→sub/b.txt indir→sub sub/uplink→../top.sls
//	            outlink→BASE/outside/secret reloutlink→../../outside/secret
//	            outdir→BASE/outside reloutdir→../../outside broken→nowhere
//	            emptylink→emptydir leaklink→../base1x/leak.txt
//	srv/base2   dup.txt only2.txt sub/b2.txt emptydir2/
//	srv/base1x  leak.txt (a sibling whose name extends base1)
//	srv/dev     top.sls dev.txt sub/d.txt
//	srv/envs    qa/{qa.txt,top.sls} prod/prod.txt
//	outside     secret sub/s2.txt
func buildTree(t testing.TB, base string) {
	t.Helper()
	files := map[string]string{
		"srv/base1/top.sls":         "base:\n  '*':\n    - a\n",
		"srv/base1/a.sls":           "a:\n  test.nop\n",
		"srv/base1/big.txt":         bigText,
		"srv/base1/empty.txt":       "",
		"srv/base1/dup.txt":         "base1\n",
		"srv/base1/ignored.bak":     "bak\n",
		"srv/base1/with space.txt":  "space\n",
		"srv/base1/ünï.txt":         "unicode\n",
		"srv/base1/.git/config":     "[core]\n",
		"srv/base1/secretdir/s.txt": "s\n",
		"srv/base1/sub/b.txt":       "b\n",
		"srv/base1/sub/x.bak":       "x\n",
		"srv/base1/sub/deep/c.txt":  "c\n",
		"srv/base2/dup.txt":         "base2\n",
		"srv/base2/only2.txt":       "only2\n",
		"srv/base2/sub/b2.txt":      "b2\n",
		"srv/base1x/leak.txt":       "leak\n",
		"srv/dev/top.sls":           "dev:\n  '*': []\n",
		"srv/dev/dev.txt":           "dev\n",
		"srv/dev/sub/d.txt":         "d\n",
		"srv/envs/qa/qa.txt":        "qa\n",
		"srv/envs/qa/top.sls":       "qa:\n  '*': []\n",
		"srv/envs/prod/prod.txt":    "prod\n",
		"outside/secret":            "secret\n",
		"outside/sub/s2.txt":        "s2\n",
	}
	dirs := []string{"srv/base1/sub/deep/emptyd", "srv/base1/emptydir", "srv/base2/emptydir2"}
	links := [][2]string{
		{"srv/base1/inlink", "sub/b.txt"},
		{"srv/base1/indir", "sub"},
		{"srv/base1/sub/uplink", "../top.sls"},
		{"srv/base1/outlink", filepath.Join(base, "outside/secret")},
		{"srv/base1/reloutlink", "../../outside/secret"},
		{"srv/base1/outdir", filepath.Join(base, "outside")},
		{"srv/base1/reloutdir", "../../outside"},
		{"srv/base1/broken", "nowhere"},
		{"srv/base1/emptylink", "emptydir"},
		{"srv/base1/leaklink", "../base1x/leak.txt"},
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	// Distinct modification times: Salt's hash cache is keyed by relative
	// path and mtime, so two roots' dup.txt written in the same instant
	// would share a cached hash there.
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, name := range names {
		p := filepath.Join(base, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(files[name]), 0o644))
		must(t, os.Chmod(p, 0o644))
		mt := t0.Add(time.Duration(i) * time.Minute)
		must(t, os.Chtimes(p, mt, mt))
	}
	for _, d := range dirs {
		must(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	for _, l := range links {
		must(t, os.Symlink(l[1], filepath.Join(base, l[0])))
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
