package wheel_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/master/wheel"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

const vectors = "../../testdata/vectors/pki"

// env is a wheel.Env over a real key store in a temporary pki_dir, whose
// salt/key events are recorded.
type env struct {
	ks   *keys.Store
	opts map[string]any
	mu   sync.Mutex
	evs  []string
}

func (e *env) Keys() *keys.Store        { return e.ks }
func (e *env) Opt(k string) (any, bool) { v, ok := e.opts[k]; return v, ok }
func (e *env) events() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.evs...)
}
func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func js(v any) string     { b, _ := json.Marshal(v); return string(b) }

// must returns v, failing the test (by panicking) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b := must(os.ReadFile(src))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	copyFile(t, filepath.Join(vectors, "master", "master.pem"), filepath.Join(pki, "master.pem"), 0o400)
	copyFile(t, filepath.Join(vectors, "master", "master.pub"), filepath.Join(pki, "master.pub"), 0o644)
	copyFile(t, filepath.Join(vectors, "minion1", "minion.pub"), filepath.Join(pki, "minions_pre", "m1"), 0o644)
	copyFile(t, filepath.Join(vectors, "proxy1", "minion.pub"), filepath.Join(pki, "minions", "p1"), 0o644)
	e := &env{opts: map[string]any{"pki_dir": pki, "cachedir": filepath.Join(dir, "cache"), "hash_type": "sha256", "keysize": int64(2048)}}
	e.ks = must(keys.Open(keys.Options{PKIDir: pki, CacheDir: filepath.Join(dir, "cache"), Logger: quiet(),
		Event: func(tag string, data map[string]any) {
			e.mu.Lock()
			e.evs = append(e.evs, tag+" "+js(payload.FromGo(data)))
			e.mu.Unlock()
		}}))
	return e
}

type started struct {
	called  bool
	funArgs []any
}

func call(e *env, fun string, req wheel.Request) (wheel.Result, started) {
	var s started
	res := wheel.Default().Run(context.Background(), fun, req, &wheel.Call{Env: e, Log: quiet()}, func(fa []any) {
		s.called, s.funArgs = true, fa
	})
	return res, s
}

func low(kv ...any) wheel.Request { return wheel.Request{Low: payload.NewMap(kv...)} }

// Fingerprints Salt 3006 computed for the vector minion keys (wheel key.finger).
const (
	fpM1 = "34:a0:c0:23:4d:65:aa:00:74:ca:ba:c4:94:85:2f:c6:76:aa:7a:4b:a9:69:aa:9a:8b:d2:cc:a3:2f:08:ea:3a"
	fpP1 = "3c:41:ac:cc:ec:16:5a:17:4c:1e:fd:04:8a:e5:cd:83:c4:3f:30:ba:df:c9:b6:7d:fd:13:07:0b:ff:42:60:c7"
)

// The vector master key's fingerprints.
var (
	fpMasterPem = must(crypt.FingerprintFile(filepath.Join(vectors, "master", "master.pem"), "sha256"))
	fpMasterPub = must(crypt.FingerprintFile(filepath.Join(vectors, "master", "master.pub"), "sha256"))
)

func TestKeyFunctions(t *testing.T) {
	e := newEnv(t)
	steps := []struct {
		name   string
		fun    string
		req    wheel.Request
		want   string
		events []string
	}{
		{"list_all", "key.list_all", low(), `{"minions":["p1"],"minions_pre":["m1"],"minions_rejected":[],"minions_denied":[],"local":["master.pem","master.pub"]}`, nil},
		{"list_acc", "key.list", low("match", "acc"), `{"minions":["p1"]}`, nil},
		{"list_un", "key.list", wheel.Request{Args: []any{"unaccepted"}}, `{"minions_pre":["m1"]}`, nil},
		{"list_bogus", "key.list", low("match", "bogus"), `{}`, nil},
		{"list_all_status", "key.list", low("match", "all"), `{"minions":["p1"],"minions_pre":["m1"],"minions_rejected":[],"minions_denied":[],"local":["master.pem","master.pub"]}`, nil},
		{"name_match", "key.name_match", low("match", "*1"), `{"minions":["p1"],"minions_pre":["m1"]}`, nil},
		{"finger", "key.finger", low("match", "*"), `{"minions":{"p1":"` + fpP1 + `"},"minions_pre":{"m1":"` + fpM1 + `"},"local":{"master.pem":"` + fpMasterPem + `","master.pub":"` + fpMasterPub + `"}}`, nil},
		{"finger_master", "key.finger_master", low(), `{"local":{"master.pub":"` + fpMasterPub + `"}}`, nil},
		{"accept", "key.accept", low("match", "m1"), `{"minions":["m1"]}`, []string{`salt/key {"act":"accept","id":"m1","result":true}`}},
		{"accept_again", "key.accept", low("match", "m*"), `{"minions":["m1"]}`, nil},
		{"reject_accepted_not_included", "key.reject", low("match", "p1"), `{"minions":["p1"]}`, nil},
		{"reject_include_accepted", "key.reject", low("match", "p1", "include_accepted", true), `{"minions_rejected":["p1"]}`, []string{`salt/key {"act":"reject","id":"p1","result":true}`}},
		{"accept_dict_rejected", "key.accept_dict", wheel.Request{Args: []any{payload.NewMap("minions_rejected", []any{"p1"})}, Kwargs: payload.NewMap("include_rejected", true)}, `{"minions":["p1"]}`, []string{`salt/key {"act":"accept","id":"p1","result":true}`}},
		{"reject_dict", "key.reject_dict", low("match", payload.NewMap("minions", []any{"m1"}), "include_accepted", true), `{"minions_rejected":["m1"]}`, []string{`salt/key {"act":"reject","id":"m1","result":true}`}},
		{"delete_dict", "key.delete_dict", low("match", payload.NewMap("minions_rejected", []any{"m1"})), `{}`, []string{`salt/key {"act":"delete","id":"m1","result":true}`}},
		{"delete", "key.delete", low("match", "p1"), `{}`, []string{`salt/key {"act":"delete","id":"p1","result":true}`}},
		{"list_all_empty", "key.list_all", low(), `{"minions":[],"minions_pre":[],"minions_rejected":[],"minions_denied":[],"local":["master.pem","master.pub"]}`, nil},
	}
	for _, s := range steps {
		before := len(e.events())
		res, st := call(e, s.fun, s.req)
		if got := js(res.Return); got != s.want || !res.Success || !st.called {
			t.Fatalf("%s: got %s success=%v started=%v\nwant %s", s.name, got, res.Success, st.called, s.want)
		}
		if got := e.events()[before:]; !reflect.DeepEqual(got, s.events) && (len(got) > 0 || len(s.events) > 0) {
			t.Fatalf("%s: events %q want %q", s.name, got, s.events)
		}
	}

	// print and master_key_str return the exact key text.
	res, _ := call(e, "key.master_key_str", low())
	pub := string(must(os.ReadFile(filepath.Join(vectors, "master", "master.pub"))))
	if js(res.Return) != js(payload.NewMap("local", payload.NewMap("master.pub", pub))) {
		t.Fatalf("master_key_str %s", js(res.Return))
	}
	copyFile(t, filepath.Join(vectors, "minion1", "minion.pub"), filepath.Join(e.ks.PKIDir(), "minions", "m1"), 0o644)
	res, _ = call(e, "key.print", low("match", "m1"))
	m1 := string(must(os.ReadFile(filepath.Join(vectors, "minion1", "minion.pub"))))
	if js(res.Return) != js(payload.NewMap("minions", payload.NewMap("m1", m1))) {
		t.Fatalf("key.print %s", js(res.Return))
	}
	if _, ok := wheel.Default().Lookup("key.key_str"); ok {
		t.Fatal("key.key_str is exposed as key.print only")
	}
	res, _ = call(e, "key.finger", low("match", "m1", "hash_type", "md5"))
	fp := res.Return.(*payload.Map).Map("minions").Str("m1")
	if want := must(crypt.Fingerprint([]byte(m1), "md5")); fp != want || len(fp) != 47 {
		t.Fatalf("md5 finger %q want %q", fp, want)
	}
}

func TestKeyGen(t *testing.T) {
	e := newEnv(t)
	res, _ := call(e, "key.gen", low())
	m, ok := res.Return.(*payload.Map)
	if !ok || !res.Success || !reflect.DeepEqual(m.Keys(), []string{"priv", "pub"}) {
		t.Fatalf("gen %v", res)
	}
	priv := must(crypt.ParsePrivateKeyPEM([]byte(m.Str("priv"))))
	pub := must(crypt.ParsePublicKeyPEM([]byte(m.Str("pub"))))
	if priv.PublicKey.N.Cmp(pub.N) != 0 || pub.N.BitLen() != 2048 || !strings.HasPrefix(m.Str("priv"), "-----BEGIN RSA PRIVATE KEY-----") {
		t.Fatal("gen: the pair does not match")
	}
	ents := must(os.ReadDir(e.ks.PKIDir()))
	for _, en := range ents {
		if n := en.Name(); n != "master.pem" && n != "master.pub" && !en.IsDir() && !strings.HasPrefix(n, ".") {
			t.Fatalf("gen left %s in pki_dir", n)
		}
	}
	// gen_accept writes the accepted key, without an event; a second call
	// keeps it unless force.
	res, _ = call(e, "key.gen_accept", low("id_", "new/../minion!"))
	m, _ = res.Return.(*payload.Map)
	path := filepath.Join(e.ks.PKIDir(), "minions", "new..minion")
	if m == nil || string(must(os.ReadFile(path))) != m.Str("pub") || len(e.events()) != 0 {
		t.Fatalf("gen_accept %s", js(res.Return))
	}
	res, _ = call(e, "key.gen_accept", wheel.Request{Args: []any{"new..minion"}})
	if js(res.Return) != `{}` {
		t.Fatalf("gen_accept existing %s", js(res.Return))
	}
	res, _ = call(e, "key.gen_accept", wheel.Request{Args: []any{"new..minion"}, Kwargs: payload.NewMap("force", true)})
	if m, _ := res.Return.(*payload.Map); m == nil || string(must(os.ReadFile(path))) != m.Str("pub") {
		t.Fatalf("gen_accept force %s", js(res.Return))
	}
	for _, bad := range []wheel.Request{low("id_", "  "), low("id_", "..."), low("id_", "x", "keysize", int64(512))} {
		if res, _ := call(e, "key.gen_accept", bad); res.Success || !strings.HasPrefix(payload.Text(res.Return), "Exception occurred in wheel key.gen_accept: ") {
			t.Fatalf("gen_accept %v: %v", js(bad.Low), res)
		}
	}
	// gen_keys writes a pair and returns the sha256 fingerprint of it.
	dir := t.TempDir()
	res, _ = call(e, "key.gen_keys", low("keydir", dir, "keyname", "k"))
	want := must(crypt.FingerprintFile(filepath.Join(dir, "k.pub"), "sha256"))
	if res.Return != want {
		t.Fatalf("gen_keys %v want %v", res.Return, want)
	}
}

func TestCallForms(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		fun     string
		req     wheel.Request
		ret     string // JSON, or a prefix ending in "…"
		success bool
		started bool
		funArgs string
	}{
		{"unknown", "nope.x", low(), `"Exception occurred in wheel nope.x: 'nope.x' is not available."`, false, false, ""},
		{"by_name", "key.accept", low("cmd", "wheel", "match", "zz", "print_event", false, "full_return", true), `{}`, true, true, `["zz",{"include_denied":false,"include_rejected":false}]`},
		{"by_name_no_kwargs", "key.list_all", low("cmd", "wheel", "__user__", "x"), `{"minions":…`, true, true, `[]`},
		{"by_name_missing", "key.list", low("cmd", "wheel"), `"Exception occurred in wheel key.list: list_ takes at least 1 argument (0 given)"`, false, false, ""},
		{"by_name_extra", "key.list_all", low("cmd", "wheel", "user", "root"), `"Exception occurred in wheel key.list_all: 'user' is an invalid keyword argument for 'salt.loaded.int.wheel.key.list_all'"`, false, false, ""},
		{"by_name_extras", "key.print", low("match", "p1", "a", 1, "b", 2, "c", 3), `"Exception occurred in wheel key.print: 'a', 'b' and 'c' are invalid keyword arguments for 'salt.loaded.int.wheel.key.key_str'"`, false, false, ""},
		{"low_arg_kwarg", "key.list", low("arg", []any{"acc"}, "kwarg", payload.NewMap()), `{"minions":["p1"]}`, true, true, `["acc"]`},
		{"low_arg_only", "key.list", low("arg", []any{"acc"}), `"Exception occurred in wheel key.list: list_ takes at least 1 argument (0 given)"`, false, false, ""},
		{"call_bad_kwarg", "key.list", wheel.Request{Args: []any{"acc"}, Kwargs: payload.NewMap("x", 1)}, `"\nPassed invalid arguments: list_() got an unexpected keyword argument 'x'\n\nUsage:…`, true, true, `["acc",{"x":1}]`},
		{"call_missing", "key.gen_accept", wheel.Request{}, `"\nPassed invalid arguments: gen_accept() missing 1 required positional argument: 'id_'…`, true, true, `[]`},
		{"call", "key.finger_master", wheel.Request{Kwargs: payload.NewMap("hash_type", "sha256")}, `{"local":{"master.pub":"` + fpMasterPub + `"}}`, true, true, `[{"hash_type":"sha256"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, st := call(e, tc.fun, tc.req)
			got := js(res.Return)
			if p, ok := strings.CutSuffix(tc.ret, "…"); ok {
				if !strings.HasPrefix(got, p) {
					t.Fatalf("return %s", got)
				}
			} else if got != tc.ret {
				t.Fatalf("return %s\nwant %s", got, tc.ret)
			}
			if res.Success != tc.success || st.called != tc.started {
				t.Fatalf("success %v started %v", res.Success, st.called)
			}
			if tc.started && js(st.funArgs) != tc.funArgs {
				t.Fatalf("fun_args %s want %s", js(st.funArgs), tc.funArgs)
			}
		})
	}
}

func TestRootsAndConfig(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	srv, dev, pil := filepath.Join(dir, "srv"), filepath.Join(dir, "dev"), filepath.Join(dir, "pillar")
	for p, text := range map[string]string{
		filepath.Join(srv, "top.sls"): "a: 1\n", filepath.Join(srv, "sub", "f.txt"): "x\n",
		filepath.Join(srv, "bin.dat"): "a\x00b", filepath.Join(pil, "top.sls"): "b: 1\n",
		filepath.Join(pil, "deep", "p.sls"): "p: 1\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(srv, "sub"), filepath.Join(srv, "link")); err != nil {
		t.Fatal(err)
	}
	e.opts["file_roots"] = map[string]any{"base": []any{srv}, "dev": []any{dev}}
	e.opts["pillar_roots"] = map[string]any{"base": []any{pil}}
	tests := []struct {
		fun  string
		req  wheel.Request
		want string
	}{
		{"file_roots.list_roots", low(), `{"base":[{"` + srv + `":{"link":{},"sub":{"f.txt":"f"},"bin.dat":"f","top.sls":"f"}}],"dev":[{"` + dev + `":{}}]}`},
		{"file_roots.list_env", low("saltenv", "nope"), `{}`},
		{"file_roots.find", low("path", "top.sls"), `[{"` + srv + `/top.sls":"txt"}]`},
		{"file_roots.find", low("path", "bin.dat"), `[{"` + srv + `/bin.dat":"bin"}]`},
		{"file_roots.find", low("path", "sub/f.txt"), `[]`}, // Salt's clean_path: only files directly in a root
		{"file_roots.read", low("path", "top.sls"), `[{"` + srv + `/top.sls":"a: 1\n"}]`},
		{"file_roots.read", low("path", "bin.dat"), `[]`},
		{"file_roots.read", low("path", "../pillar/top.sls"), `[]`},
		{"pillar_roots.list_roots", low(), `{"base":[{"` + pil + `":{"deep":{"p.sls":"f"},"top.sls":"f"}}]}`},
		{"pillar_roots.read", low("path", "deep/p.sls"), `[{"` + pil + `/deep/p.sls":"p: 1\n"}]`},
		{"pillar_roots.read", low("path", "/etc/passwd"), `[]`},
		{"file_roots.write", low("data", "new\n", "path", "w/new.sls"), `"Wrote data to file ` + srv + `/w/new.sls"`},
		{"file_roots.write", low("data", "x", "path", "a", "saltenv", "qa"), `"Named environment qa is not present"`},
		{"file_roots.write", low("data", "x", "path", "a", "index", 1), `"Specified index 1 in environment base is not present"`},
		{"file_roots.write", low("data", "x", "path", "/etc/x"), `"The path passed in /etc/x is not relative to the environment base"`},
		{"file_roots.write", low("data", "x", "path", "../x"), `"Invalid path: ../x"`},
		{"pillar_roots.write", low("data", "x", "path", "../x"), `"Invalid path"`},
	}
	for _, tc := range tests {
		res, _ := call(e, tc.fun, tc.req)
		if got := js(res.Return); got != tc.want || !res.Success {
			t.Fatalf("%s %s: got %s (success %v)\nwant %s", tc.fun, js(tc.req.Low), got, res.Success, tc.want)
		}
	}
	if b := must(os.ReadFile(filepath.Join(srv, "w", "new.sls"))); string(b) != "new\n" {
		t.Fatalf("written %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("write escaped the root")
	}

	// config.values reads the configuration file again, defaults filled in.
	etc := filepath.Join(dir, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "root_dir: " + dir + "\nid: cfgtest\nfile_roots: {base: [" + srv + "]}\nworker_threads: 7\n"
	if err := os.WriteFile(filepath.Join(etc, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	e.opts["conf_file"] = filepath.Join(etc, "master")
	res, _ := call(e, "config.values", low())
	v, ok := res.Return.(*payload.Map)
	if !ok || v.Str("id") != "cfgtest" || v.Str("conf_file") != filepath.Join(etc, "master") || mustInt(v, "worker_threads") != 7 ||
		mustInt(v, "ret_port") != 4506 || v.Len() < 200 || js(v.Map("file_roots")) != `{"base":["`+srv+`"]}` {
		t.Fatalf("config.values %v", res)
	}
	delete(e.opts, "conf_file")
	if res, _ := call(e, "config.values", low()); res.Success {
		t.Fatalf("config.values without conf_file %v", res)
	}
}

func mustInt(m *payload.Map, k string) int64 {
	v, _ := m.Get(k)
	n, _ := payload.AsInt(v)
	return n
}
