package eauth

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/testutil"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

type aclCases struct {
	Universe []string `json:"universe"`
	Auth     []struct {
		Name      string   `json:"name"`
		AuthList  []any    `json:"auth_list"`
		Funs      []string `json:"funs"`
		Args      [][]any  `json:"args"`
		Minions   []string `json:"minions"`
		Whitelist []string `json:"whitelist"`
	} `json:"auth"`
	Spec []struct {
		Name     string `json:"name"`
		AuthList []any  `json:"auth_list"`
		Fun      string `json:"fun"`
		Low      any    `json:"low"`
		Form     string `json:"form"`
	} `json:"spec"`
	Fill []struct {
		Name       string         `json:"name"`
		Provider   map[string]any `json:"provider"`
		User       string         `json:"user"`
		Groups     []string       `json:"groups"`
		Permissive bool           `json:"permissive"`
	} `json:"fill"`
}

type aclGolden struct {
	Auth []struct {
		Name   string `json:"name"`
		Result bool   `json:"result"`
	} `json:"auth"`
	Spec []struct {
		Name   string `json:"name"`
		Result bool   `json:"result"`
		Error  string `json:"error"`
	} `json:"spec"`
	Fill []struct {
		Name   string `json:"name"`
		Result []any  `json:"result"`
	} `json:"fill"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// jsonNumbers turns the float64 of encoding/json into int64 where whole,
// as msgpack loads deliver them.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case []any:
		for i := range x {
			x[i] = jsonNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = jsonNumbers(x[k])
		}
	}
	return v
}

// TestACLGolden checks AuthCheck, SpecCheck and FillAuthList against the
// answers of Salt 3006's CkMinions for the cases of the Salt eauth and
// ACL documentation (and corner cases).
func TestACLGolden(t *testing.T) {
	if testutil.Update() {
		src := saltpeer.Require(t)
		cmd := exec.Command(saltpeer.Python(), "testdata/gen_golden.py", "testdata/acl_cases.json", "testdata/acl_golden.json")
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_golden.py: %v\n%s", err, out)
		}
	}
	var cases aclCases
	var gold aclGolden
	readJSON(t, "testdata/acl_cases.json", &cases)
	readJSON(t, "testdata/acl_golden.json", &gold)
	if len(gold.Auth) != len(cases.Auth) || len(gold.Spec) != len(cases.Spec) || len(gold.Fill) != len(cases.Fill) {
		t.Fatal("golden file out of date: run with -update and GSALT_SALT_SRC")
	}
	for i, c := range cases.Auth {
		t.Run("auth/"+c.Name, func(t *testing.T) {
			for j := range c.Args {
				c.Args[j] = jsonNumbers(c.Args[j]).([]any)
			}
			minions := c.Minions
			tgtOK := func(valid string) bool {
				var v []string
				for _, m := range cases.Universe {
					if py.Fnmatch(m, valid) {
						v = append(v, m)
					}
				}
			next:
				for _, m := range minions {
					for _, x := range v {
						if x == m {
							continue next
						}
					}
					return false
				}
				return true
			}
			got := AuthCheck(c.AuthList, c.Funs, c.Args, tgtOK, c.Whitelist)
			if got != gold.Auth[i].Result {
				t.Errorf("AuthCheck = %v, Salt says %v", got, gold.Auth[i].Result)
			}
		})
	}
	for i, c := range cases.Spec {
		t.Run("spec/"+c.Name, func(t *testing.T) {
			got, err := SpecCheck(c.AuthList, c.Fun, jsonNumbers(c.Low), c.Form)
			want := gold.Spec[i]
			if want.Error != "" {
				if err == nil || err.Error() != want.Error {
					t.Errorf("SpecCheck error = %v, Salt says %q", err, want.Error)
				}
				return
			}
			if err != nil || got != want.Result {
				t.Errorf("SpecCheck = %v, %v; Salt says %v", got, err, want.Result)
			}
		})
	}
	for i, c := range cases.Fill {
		t.Run("fill/"+c.Name, func(t *testing.T) {
			got := FillAuthList(c.Provider, c.User, c.Groups, c.Permissive)
			want := gold.Fill[i].Result
			if !sameMultiset(got, want) {
				t.Errorf("FillAuthList = %v, Salt says %v", got, want)
			}
		})
	}
}

// sameMultiset compares auth lists ignoring order (Go maps from YAML/JSON
// have no order; the ACL outcome does not depend on it).
func sameMultiset(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
outer:
	for _, x := range a {
		for j, y := range b {
			if !used[j] && reflect.DeepEqual(x, y) {
				used[j] = true
				continue outer
			}
		}
		return false
	}
	return true
}
