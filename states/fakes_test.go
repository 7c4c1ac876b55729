package states

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// fakeFiles is a file client over directories per saltenv: salt://a/b.sls
// in saltenv e is roots[e]/a/b.sls. It implements render.FileSource and
// FileLister.
type fakeFiles struct {
	roots map[string]string
}

func (f *fakeFiles) CacheFile(_ context.Context, src, saltenv string) (string, error) {
	rel, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return "", fmt.Errorf("unsupported url %s", src)
	}
	root, ok := f.roots[saltenv]
	if !ok {
		return "", nil
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return "", nil
	}
	return p, nil
}

func (f *fakeFiles) FileList(_ context.Context, saltenv, prefix string) (any, error) {
	root, ok := f.roots[saltenv]
	if !ok {
		return []any{}, nil
	}
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, prefix) {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	l := make([]any, len(out))
	for i, s := range out {
		l[i] = s
	}
	return l, err
}

func (f *fakeFiles) Envs(context.Context) (any, error) {
	var out []string
	for e := range f.roots {
		out = append(out, e)
	}
	sort.Strings(out)
	l := make([]any, len(out))
	for i, s := range out {
		l[i] = s
	}
	return l, nil
}

// kwStr returns a **kwargs value or def.
func kwGet(c *Call, key string, def any) any {
	if c.Args != nil && c.Args.Kwargs != nil {
		if v, ok := c.Args.Kwargs.Get(key); ok {
			return v
		}
	}
	return def
}

// testChanges is test.* states' dummy change.
func testChanges() *payload.Map {
	return payload.NewMap("testing", payload.NewMap("old", "Unchanged", "new", "Something pretended to change"))
}

// fakeTestStates are minimal stand-ins for Salt's test state module
// (salt/states/test.py) with its texts; test.mod_watch is registered as a
// module-level function, as in Salt.
func fakeTestStates() []Function {
	nameKw := modules.Spec{Params: []modules.Param{{Name: "name", Required: true}}, Kwargs: true}
	succeed := func(_ context.Context, c *Call) (Ret, error) {
		return Ret{Name: c.Name, Result: True, Comment: pyStr(kwGet(c, "comment", "Success!"))}, nil
	}
	return []Function{
		{Name: "test.nop", Spec: nameKw, Fn: func(_ context.Context, c *Call) (Ret, error) {
			return Ret{Name: c.Name, Result: True, Comment: "Success!"}, nil
		}},
		{Name: "test.succeed_without_changes", Spec: nameKw, Fn: succeed},
		{Name: "test.fail_without_changes", Spec: nameKw, Fn: func(_ context.Context, c *Call) (Ret, error) {
			r := Ret{Name: c.Name, Result: False, Comment: pyStr(kwGet(c, "comment", "Failure!"))}
			if c.Test {
				r.Comment = "If we weren't testing, this would be a failure!"
			}
			return r, nil
		}},
		{Name: "test.succeed_with_changes", Spec: nameKw, Fn: func(_ context.Context, c *Call) (Ret, error) {
			r := Ret{Name: c.Name, Result: True, Comment: pyStr(kwGet(c, "comment", "Success!")), Changes: testChanges()}
			if c.Test {
				r.Result, r.Comment = None, "If we weren't testing, this would be successful with changes"
			}
			return r, nil
		}},
		{Name: "test.fail_with_changes", Spec: nameKw, Fn: func(_ context.Context, c *Call) (Ret, error) {
			r := Ret{Name: c.Name, Result: False, Comment: pyStr(kwGet(c, "comment", "Failure!")), Changes: testChanges()}
			if c.Test {
				r.Result, r.Comment = None, "If we weren't testing, this would be failed with changes"
			}
			return r, nil
		}},
		{Name: "test.configurable_test_state",
			Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "changes", Default: true}, {Name: "result", Default: true}, {Name: "comment", Default: ""}, {Name: "warnings"}}},
			Fn: func(_ context.Context, c *Call) (Ret, error) {
				r := Ret{Name: c.Name, Comment: pyStr(c.Args.Get("comment"))}
				changes := c.Args.Get("changes")
				switch changes {
				case true:
					r.Changes = testChanges()
				case false:
				default:
					return Ret{}, fmt.Errorf("%w: You have specified the state option 'changes' with invalid arguments. It must be either True, False, or 'Random'", modules.ErrInvocation)
				}
				switch res := c.Args.Get("result"); res {
				case true:
					r.Result = True
				case false:
					r.Result = False
				default:
					return Ret{}, fmt.Errorf("%w: You have specified the state option 'result' with invalid arguments. It must be either True, False, or 'Random'", modules.ErrInvocation)
				}
				switch w := c.Args.Get("warnings").(type) {
				case nil:
				case string:
					r.Warnings = []string{w}
				case []any:
					for _, s := range w {
						r.Warnings = append(r.Warnings, pyStr(s))
					}
				}
				if c.Test {
					r.Result = None
					if changes == false {
						r.Result = True
					}
					if c.Args.Str("comment") == "" {
						r.Comment = "This is a test"
					}
				}
				return r, nil
			}},
		{Name: "test.show_notification", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "text"}}, Kwargs: true},
			Fn: func(_ context.Context, c *Call) (Ret, error) {
				if !payload.Truthy(c.Args.Get("text")) {
					return Ret{}, fmt.Errorf("%w: Missing required argument text.", modules.ErrInvocation)
				}
				return Ret{Name: c.Name, Result: True, Comment: c.Args.Str("text")}, nil
			}},
		{Name: "test.mod_watch", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "sfun"}}, Kwargs: true},
			Fn: func(_ context.Context, c *Call) (Ret, error) {
				has := []any{}
				for _, req := range c.Reqs["watch"] {
					if r, ok := c.Running.Get(GenTag(req)); ok {
						if ch, _ := r.(*payload.Map).Get("changes"); payload.Truthy(ch) {
							has = append(has, getStr(req, "state")+": "+getStr(req, "__id__"))
						}
					}
				}
				ch, _ := kwGet(c, "changes", payload.NewMap("Requisites with changes", has)).(*payload.Map)
				res := ResultOf(kwGet(c, "result", true))
				return Ret{Name: c.Name, Result: res, Comment: pyStr(kwGet(c, "comment", "Watch statement fired.")), Changes: ch}, nil
			}},
	}
}

// fakeExec are the execution functions the state system calls in tests:
// cmd.retcode (a real /bin/sh), test.true/test.false and test.echo.
func fakeExec() []modules.Function {
	return []modules.Function{
		{Name: "cmd.retcode", Spec: modules.Spec{Params: []modules.Param{{Name: "cmd", Required: true}}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Args.Str("cmd"))
				if cwd := c.Args.Kwargs.Str("cwd"); cwd != "" {
					cmd.Dir = cwd
				}
				err := cmd.Run()
				var ee *exec.ExitError
				switch {
				case err == nil:
					return int64(0), nil
				case errors.As(err, &ee):
					return int64(ee.ExitCode()), nil
				}
				return nil, fmt.Errorf("%w: %v", modules.ErrExecution, err)
			}},
		{Name: "test.true", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
		{Name: "test.false", Fn: func(context.Context, *modules.Call) (any, error) { return false, nil }},
		{Name: "test.echo", Spec: modules.Spec{Params: []modules.Param{{Name: "text", Required: true}}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return c.Args.Get("text"), nil }},
		{Name: "test.arg", Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				args := append([]any{}, c.Args.Varargs...)
				return payload.NewMap("args", args, "kwargs", c.Args.CleanKwargs()), nil
			}},
		{Name: "test.retcode", Spec: modules.Spec{Params: []modules.Param{{Name: "code", Required: true}}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				n, _ := c.Args.Int("code")
				c.Retcode = int(n)
				return true, nil
			}},
		{Name: "test.raise", Fn: func(context.Context, *modules.Call) (any, error) {
			return nil, fmt.Errorf("%w: boom", modules.ErrExecution)
		}},
	}
}

// harness is a minion environment with the state system registered.
type harness struct {
	mods   *modules.Registry
	states *Registry
	env    *modules.Env
	files  *fakeFiles
	opts   *payload.Map
}

// newHarness builds a harness serving roots (saltenv → directory).
func newHarness(t testing.TB, roots map[string]string, extra ...Function) *harness {
	t.Helper()
	h := &harness{mods: modules.NewRegistry(), states: NewRegistry(), files: &fakeFiles{roots: roots}, opts: payload.NewMap()}
	if err := h.states.Register(append(fakeTestStates(), extra...)...); err != nil {
		t.Fatal(err)
	}
	if err := h.mods.Register(fakeExec()...); err != nil {
		t.Fatal(err)
	}
	if err := RegisterExec(h.mods, h.states, render.Default()); err != nil {
		t.Fatal(err)
	}
	h.env = &modules.Env{
		ID: "golden", Opts: h.opts, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Grains:   payload.NewMap("id", "golden", "os", "Debian", "shell", "/bin/sh"),
		Pillar:   payload.NewMap(),
		Registry: h.mods,
		Services: map[string]any{"files": h.files},
	}
	return h
}

// run executes an execution function with positional args and keyword
// arguments.
func (h *harness) run(t testing.TB, fun string, args []any, kw *payload.Map) modules.Result {
	t.Helper()
	all := append([]any(nil), args...)
	if kw != nil && kw.Len() > 0 {
		k := kw.Clone()
		k.Set("__kwarg__", true)
		all = append(all, k)
	}
	return h.mods.Execute(context.Background(), modules.Binder{}, h.env, fun, all, nil)
}

// writeTree writes files (path → content) under a new temp dir.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
