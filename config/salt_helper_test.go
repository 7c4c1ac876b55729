package config

import (
	"bytes"
	"encoding/json"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// saltScript runs real Salt on a list of requests given as JSON in argv[1]
// and prints the results as JSON after a marker. Non-string mapping keys are
// printed with Python's str(), bytes as latin-1 text.
const saltScript = `
import sys, json
from collections.abc import Mapping
import salt.config as c
import salt.utils.yaml as y

def norm(x):
    if isinstance(x, bytes):
        return x.decode("latin-1")
    if isinstance(x, Mapping):
        return {str(k): norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)) or type(x).__name__ == "ImmutableList":
        return [norm(v) for v in x]
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return repr(x)

out = []
for req in json.loads(sys.argv[1]):
    try:
        kind = req["kind"]
        if kind == "yaml":
            res = y.safe_load(req["text"])
        elif kind == "master":
            res = c.master_config(req["path"])
        elif kind == "minion":
            res = c.minion_config(req["path"], cache_minion_id=req.get("cache", False))
        elif kind == "proxy":
            res = c.proxy_config(req["path"], minion_id=req["proxyid"])
        out.append({"ok": True, "value": norm(res)})
    except BaseException as e:
        out.append({"ok": False, "err": repr(e)})
sys.stdout.write("\n@@JSON@@" + json.dumps(out))
`

type saltReq struct {
	Kind    string `json:"kind"`
	Path    string `json:"path,omitempty"`
	Text    string `json:"text"`
	ProxyID string `json:"proxyid,omitempty"`
}

type saltRes struct {
	OK    bool   `json:"ok"`
	Value any    `json:"value"`
	Err   string `json:"err"`
}

// runSalt evaluates reqs with the real Salt named by GSALT_SALT_SRC, or
// skips the test when it is unset.
func runSalt(t *testing.T, reqs []saltReq) []saltRes {
	t.Helper()
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		t.Skip("GSALT_SALT_SRC is not set: skipping the comparison with real Salt")
	}
	arg, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", saltScript, string(arg))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src+":"+saltpeer.Pyshim())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running salt: %v\n%s", err, stderr.String())
	}
	_, js, ok := strings.Cut(stdout.String(), "@@JSON@@")
	if !ok {
		t.Fatalf("no JSON from salt; stderr:\n%s", stderr.String())
	}
	var res []saltRes
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("salt JSON: %v", err)
	}
	if len(res) != len(reqs) {
		t.Fatalf("salt returned %d results for %d requests", len(res), len(reqs))
	}
	return res
}

// jsonNorm round-trips v through JSON so Go and Python values compare.
func jsonNorm(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffOpts reports keys whose values differ between gsalt and Salt,
// ignoring the keys in skip.
func diffOpts(t *testing.T, got map[string]any, want any, skip ...string) []string {
	t.Helper()
	g, _ := jsonNorm(t, got).(map[string]any)
	w, _ := want.(map[string]any)
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	keys := map[string]bool{}
	for k := range g {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if skipped[k] {
			continue
		}
		gv, gok := g[k]
		wv, wok := w[k]
		if gok != wok || !reflect.DeepEqual(gv, wv) {
			gj, _ := json.Marshal(gv)
			wj, _ := json.Marshal(wv)
			diffs = append(diffs, k+": gsalt="+string(gj)+" salt="+string(wj)+
				map[bool]string{true: "", false: " (missing on one side)"}[gok == wok])
		}
	}
	sort.Strings(diffs)
	return diffs
}

// writeFiles creates files (path relative to dir → content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
