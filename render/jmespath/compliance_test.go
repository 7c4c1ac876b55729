package jmespath

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestCompliance runs JMESPath's official compliance suite
// (github.com/jmespath/jmespath.test) through gsalt and through Python's
// jmespath (Debian's python3-jmespath, what Salt's json_query calls) and
// requires the same repr() of every result, or the same exception class
// and text. GSALT_JMESPATH_SUITE names a checkout of the suite or a git
// URL to clone into a scratch folder; without it the test skips. The suite
// is never committed.
func TestCompliance(t *testing.T) {
	src := os.Getenv("GSALT_JMESPATH_SUITE")
	if src == "" {
		t.Skip("set GSALT_JMESPATH_SUITE to a checkout or git URL of github.com/jmespath/jmespath.test")
	}
	dir := src
	if st, err := os.Stat(filepath.Join(src, "tests")); err != nil || !st.IsDir() {
		dir = filepath.Join(t.TempDir(), "suite")
		if out, err := exec.Command("git", "clone", "-q", "--depth", "1", src, dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone %s: %v\n%s", src, err, out)
		}
	}
	tests := filepath.Join(dir, "tests")
	cmd := exec.Command("/usr/bin/python3", "testdata/compliance.py", tests)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("compliance.py: %v\n%s", err, stderr.String())
	}
	type pyCase struct {
		File  string   `json:"file"`
		Given int      `json:"given"`
		Case  int      `json:"case"`
		Repr  *string  `json:"repr"`
		Error []string `json:"error"`
	}
	files := map[string][]any{}
	total, same, specSame := 0, 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var pc pyCase
		if err := json.Unmarshal(sc.Bytes(), &pc); err != nil {
			t.Fatal(err)
		}
		suites, ok := files[pc.File]
		if !ok {
			text, err := os.ReadFile(filepath.Join(tests, pc.File))
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonLiteral(string(text))
			if err != nil {
				t.Fatalf("%s: %v", pc.File, err)
			}
			suites = v.(*jinja.List).Items
			files[pc.File] = suites
		}
		suite := suites[pc.Given].(*payload.Map)
		given, _ := suite.Get("given")
		cases, _ := suite.Get("cases")
		c := cases.(*jinja.List).Items[pc.Case].(*payload.Map)
		expr, _ := c.Get("expression")
		total++
		got, err := Search(expr.(string), given)
		var gotRepr string
		var gotErr []string
		if err != nil {
			je, ok := err.(*Error)
			if !ok {
				t.Errorf("%s #%d/%d %q: non-Python error %v", pc.File, pc.Given, pc.Case, expr, err)
				continue
			}
			gotErr = []string{je.Kind, je.Msg}
		} else {
			gotRepr = jinja.Repr(got)
		}
		if pc.Repr != nil && gotErr == nil && gotRepr == *pc.Repr || pc.Error != nil && gotErr != nil && gotErr[0] == pc.Error[0] && gotErr[1] == pc.Error[1] {
			same++
		} else {
			t.Errorf("%s #%d/%d %q:\n python: %v %v\n  gsalt: %q %v", pc.File, pc.Given, pc.Case, expr, deref(pc.Repr), pc.Error, gotRepr, gotErr)
		}
		if want, ok := c.Get("result"); ok && err == nil && jinja.Equal(want, got) {
			specSame++
		} else if _, ok := c.Get("error"); ok && err != nil {
			specSame++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	t.Logf("%d cases in %s: %d equal to Python's jmespath, %d agree with the suite's expected result or error", total, strings.Join(names, " "), same, specSame)
	if total < 800 {
		t.Errorf("only %d cases ran", total)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
