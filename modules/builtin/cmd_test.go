package builtin_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// cfnRun executes fun through the registry the way the minion does.
func cfnRun(t *testing.T, env *modules.Env, fun string, args []any, pub *payload.Map) modules.Result {
	t.Helper()
	r := registry(t)
	if env == nil {
		env = &modules.Env{ID: "m1"}
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	env.Registry = r
	return r.Execute(context.Background(), modules.Binder{}, env, fun, args, pub)
}

// cfnJobPub is the publish of a job run from the CLI (it has a jid, so
// cmd.run uses the shell by default).
func cfnJobPub(fun string) *payload.Map {
	return payload.NewMap("fun", fun, "jid", "20261122030118135185", "tgt", "m1", "user", "root")
}

func TestCmdRun(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	tests := []struct {
		name    string
		fun     string
		args    []any
		pub     bool
		want    any
		retcode int
		prefix  string // error prefix instead of want
	}{
		{"echo", "cmd.run", []any{"echo hello"}, false, "hello", 0, ""},
		{"rstrip", "cmd.run", []any{"printf 'a\\n\\n  '"}, false, "a", 0, ""},
		{"rstrip off", "cmd.run", []any{"printf 'a\\n'", kw("rstrip", false)}, false, "a\n", 0, ""},
		{"no shell by default outside a job", "cmd.run", []any{"echo a | tr a b"}, false, "a | tr a b", 0, ""},
		{"shell in a job", "cmd.run", []any{"echo a | tr a b"}, true, "b", 0, ""},
		{"python_shell=False in a job", "cmd.run", []any{"echo a | tr a b", kw("python_shell", false)}, true, "a | tr a b", 0, ""},
		{"cmd.shell", "cmd.shell", []any{"echo $((1+2))"}, false, "3", 0, ""},
		{"shlex quoting", "cmd.run", []any{`printf '%s|' "a b" 'c d' e\ f "x\$y" "q\"z" '' a''b`}, false, `a b|c d|e f|x\$y|q"z||ab|`, 0, ""},
		{"shlex error", "cmd.run", []any{`echo "open`}, false, nil, 1, "The minion function caused an exception: ValueError: No closing quotation"},
		{"list command", "cmd.run", []any{[]any{"printf", "%s-%s", "a b", int64(3)}}, false, "a b-3", 0, ""},
		{"stderr merged", "cmd.run", []any{"sh -c 'echo out; echo err >&2'"}, false, "out\nerr", 0, ""},
		{"exit code is the job retcode", "cmd.run", []any{"sh -c 'echo x; exit 3'"}, false, "x", 3, ""},
		{"exit code in a job shell", "cmd.run", []any{"exit 4"}, true, "", 4, ""},
		{"ignore_retcode", "cmd.run", []any{"false", kw("ignore_retcode", true)}, false, "", 0, ""},
		{"success_retcodes list", "cmd.run", []any{"sh -c 'exit 2'", kw("success_retcodes", []any{int64(2)})}, false, "", 0, ""},
		{"success_retcodes string", "cmd.run", []any{"sh -c 'exit 2'", kw("success_retcodes", "1, 2")}, false, "", 0, ""},
		{"success_retcodes invalid", "cmd.run", []any{"true", kw("success_retcodes", "x")}, false, nil, 1, "ERROR executing 'cmd.run': success_retcodes must be a list of integers"},
		{"success_stdout", "cmd.run", []any{"sh -c 'echo fine; exit 5'", kw("success_stdout", []any{"fin"})}, false, "fine", 0, ""},
		{"cwd", "cmd.run", []any{"pwd", kw("cwd", dir)}, false, dir, 0, ""},
		{"cwd positional", "cmd.run", []any{"pwd", dir}, false, dir, 0, ""},
		{"cwd missing", "cmd.run", []any{"pwd", kw("cwd", "/nonexistent/x")}, false, "ERROR: Specified cwd '/nonexistent/x' either not absolute or does not exist", 1, ""},
		{"cwd relative", "cmd.run", []any{"pwd", kw("cwd", "tmp")}, false, "ERROR: Specified cwd 'tmp' either not absolute or does not exist", 1, ""},
		{"env dict", "cmd.run", []any{"printenv GSALT_T", kw("env", payload.NewMap("GSALT_T", "v1"))}, false, "v1", 0, ""},
		{"env list", "cmd.run", []any{"printenv GSALT_T", kw("env", []any{payload.NewMap("GSALT_T", int64(7))})}, false, "7", 0, ""},
		{"env None value", "cmd.run", []any{"sh -c 'echo \"[$GSALT_T]\"'", kw("env", payload.NewMap("GSALT_T", nil))}, false, "[]", 0, ""},
		{"locale reset", "cmd.run", []any{"printenv LC_MESSAGES"}, false, "C", 0, ""},
		{"locale kept when given", "cmd.run", []any{"printenv LC_MESSAGES", kw("env", payload.NewMap("LC_MESSAGES", "fr_FR"))}, false, "fr_FR", 0, ""},
		{"clean_env", "cmd.run", []any{"/usr/bin/env", kw("clean_env", true, "reset_system_locale", false, "env", payload.NewMap("ONLY", "1"))}, false, "ONLY=1", 0, ""},
		{"prepend_path", "cmd.run", []any{"sh -c 'echo ${PATH%%:*}'", kw("prepend_path", "/opt/gsalt/bin")}, false, "/opt/gsalt/bin", 0, ""},
		{"stdin", "cmd.run", []any{"cat", kw("stdin", `one\ntwo`)}, false, "one\ntwo", 0, ""},
		{"stdin raw newlines", "cmd.run", []any{"cat", kw("stdin", `one\ntwo`, "stdin_raw_newlines", true)}, false, `one\ntwo`, 0, ""},
		{"stdin not read", "cmd.run", []any{"true", kw("stdin", strings.Repeat("x", 1<<20))}, false, "", 0, ""},
		{"umask", "cmd.run", []any{"sh -c umask", kw("umask", int64(77))}, false, "0077", 0, ""},
		{"umask string", "cmd.run", []any{"sh -c umask", kw("umask", "027")}, false, "0027", 0, ""},
		{"umask zero", "cmd.run", []any{"true", kw("umask", "0")}, false, "ERROR: Zero umask is not allowed.", 1, ""},
		{"umask invalid", "cmd.run", []any{"true", kw("umask", "9")}, false, "ERROR: Invalid umask: '9'", 1, ""},
		{"shell missing", "cmd.run", []any{"true", kw("shell", "/nonexistent/sh")}, false, "ERROR: The shell /nonexistent/sh is not available", 1, ""},
		{"command missing", "cmd.run", []any{"gsalt_no_such_cmd --x"}, false, nil, 1,
			"ERROR: Unable to run command '['gsalt_no_such_cmd', '--x']' with the context '{"},
		{"hide_output", "cmd.run", []any{"echo secret", kw("hide_output", true)}, false, "", 0, ""},
		{"raise_err", "cmd.run", []any{"sh -c 'echo bad; exit 1'", kw("raise_err", true)}, false, "ERROR: bad", 1, ""},
		{"template unsupported", "cmd.run", []any{"true", kw("template", "jinja")}, false, "ERROR: Attempted to render file paths with unavailable engine jinja", 1, ""},
		{"timeout list", "cmd.run", []any{"sleep 20", kw("timeout", int64(1))}, false, "['sleep', '20'] : Timed out after 1 seconds", 0, ""},
		{"timeout shell", "cmd.run", []any{"sleep 20; echo no", kw("timeout", 0.5)}, true, "sleep 20; echo no : Timed out after 0.5 seconds", 0, ""},
		{"timeout not a number", "cmd.run", []any{"true", kw("timeout", "x")}, false, nil, 1, "The minion function caused an exception: TimedProcTimeoutError: Error: timeout x must be a number"},
		{"run_stdout", "cmd.run_stdout", []any{"sh -c 'echo out; echo err >&2; exit 1'"}, false, "out", 1, ""},
		{"run_stderr", "cmd.run_stderr", []any{"sh -c 'echo out; echo err >&2'"}, false, "err", 0, ""},
		{"retcode", "cmd.retcode", []any{"sh -c 'exit 7'"}, false, int64(7), 7, ""},
		{"retcode ignore", "cmd.retcode", []any{"sh -c 'exit 7'", kw("ignore_retcode", true)}, false, int64(7), 0, ""},
		{"signal retcode", "cmd.retcode", []any{"sh -c 'kill -TERM $$'"}, false, int64(-15), -15, ""},
		{"which", "cmd.which", []any{"sh"}, false, nil, 0, ""},
		{"which missing", "cmd.which", []any{"gsalt_no_such_cmd"}, false, nil, 0, ""},
		{"has_exec", "cmd.has_exec", []any{"sh"}, false, true, 0, ""},
		{"has_exec missing", "cmd.has_exec", []any{"gsalt_no_such_cmd"}, false, false, 0, ""},
		{"unknown kwarg refused by which", "cmd.which", []any{"sh", kw("x", int64(1))}, false, "ERROR executing 'cmd.which': The following keyword arguments are not valid: x=1", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pub *payload.Map
			if tc.pub {
				pub = cfnJobPub(tc.fun)
			}
			res := cfnRun(t, nil, tc.fun, tc.args, pub)
			if res.Retcode != tc.retcode {
				t.Fatalf("retcode %d, want %d (return %#v)", res.Retcode, tc.retcode, res.Return)
			}
			if tc.prefix != "" {
				s, _ := res.Return.(string)
				if !strings.HasPrefix(s, tc.prefix) {
					t.Fatalf("return %q, want prefix %q", s, tc.prefix)
				}
				return
			}
			if tc.want == nil {
				return
			}
			if d := vectors.Equal(res.Return, tc.want); d != "" {
				t.Fatalf("return %#v: %s", res.Return, d)
			}
		})
	}
}

func TestCmdRunAll(t *testing.T) {
	res := cfnRun(t, nil, "cmd.run_all", []any{"sh -c 'echo out; echo err >&2; exit 2'"}, nil)
	m, ok := res.Return.(*payload.Map)
	if !ok {
		t.Fatalf("return %#v", res.Return)
	}
	if got := strings.Join(m.Keys(), ","); got != "pid,retcode,stdout,stderr" {
		t.Fatalf("keys %s", got)
	}
	pid, _ := m.Int("pid")
	rc, _ := m.Int("retcode")
	if pid <= 0 || rc != 2 || m.Str("stdout") != "out" || m.Str("stderr") != "err" || res.Retcode != 2 {
		t.Fatalf("run_all %v %v %q %q job retcode %d", pid, rc, m.Str("stdout"), m.Str("stderr"), res.Retcode)
	}

	res = cfnRun(t, nil, "cmd.run_all", []any{"sh -c 'echo out; echo err >&2'", kw("redirect_stderr", true)}, nil)
	m = res.Return.(*payload.Map)
	if m.Str("stdout") != "out\nerr" || m.Str("stderr") != "" {
		t.Fatalf("redirect_stderr: %q %q", m.Str("stdout"), m.Str("stderr"))
	}

	res = cfnRun(t, nil, "cmd.run_all", []any{"sleep 20", kw("timeout", int64(1))}, nil)
	m = res.Return.(*payload.Map)
	rc, _ = m.Int("retcode")
	if got := strings.Join(m.Keys(), ","); got != "stdout,stderr,retcode,pid" || rc != 1 ||
		m.Str("stdout") != "['sleep', '20'] : Timed out after 1 seconds" || res.Retcode != 0 {
		t.Fatalf("timeout: %v job retcode %d", m, res.Retcode)
	}

	// invalid UTF-8 is replaced, as Python's errors="replace" does
	res = cfnRun(t, nil, "cmd.run_all", []any{`printf 'a\377b'`}, nil)
	if s := res.Return.(*payload.Map).Str("stdout"); s != "a\uFFFDb" {
		t.Fatalf("decode: %q", s)
	}
}

// TestCmdTimeoutKillsGroup: a timed-out command's children die with it
// and the call returns although a grandchild held the output pipe.
func TestCmdTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	res := cfnRun(t, nil, "cmd.run", []any{"sleep 30 & echo $! > " + pidFile + "; wait", kw("timeout", int64(1))}, cfnJobPub("cmd.run"))
	if s, _ := res.Return.(string); !strings.HasSuffix(s, ": Timed out after 1 seconds") {
		t.Fatalf("return %q", s)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !testutil.Poll(5*time.Second, func() bool { return !cfnProcessAlive(pid) }) {
		t.Fatalf("grandchild %d survived the timeout", pid)
	}
}

// cfnProcessAlive reports whether pid runs (zombies count as dead).
func cfnProcessAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// TestCmdCancel: a cancelled job stops the command.
func TestCmdCancel(t *testing.T) {
	r := registry(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan modules.Result, 1)
	started := filepath.Join(t.TempDir(), "started")
	go func() {
		done <- r.Execute(ctx, modules.Binder{}, &modules.Env{Registry: r, Log: slog.New(slog.DiscardHandler)}, "cmd.run", []any{"sh -c 'touch " + started + "; exec sleep 60'"}, nil)
	}()
	// Cancel a command that is running, not one still starting.
	testutil.Eventually(t, 10*time.Second, func() bool { _, err := os.Stat(started); return err == nil }, "the command to start")
	cancel()
	res := <-done
	if s, _ := res.Return.(string); !strings.Contains(s, "context canceled") || res.Retcode != 1 {
		t.Fatalf("return %#v", res.Return)
	}
}

// TestCmdOutputBounded: output beyond the in-memory limit is drained and
// dropped, never blocking the command.
func TestCmdOutputBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB through a pipe")
	}
	res := cfnRun(t, nil, "cmd.run_all", []any{"head -c 40000000 /dev/zero | tr '\\0' a; echo done >&2"}, cfnJobPub("cmd.run_all"))
	m := res.Return.(*payload.Map)
	if n := len(m.Str("stdout")); n != 32<<20 {
		t.Fatalf("stdout length %d", n)
	}
	if m.Str("stderr") != "done" {
		t.Fatalf("stderr %q", m.Str("stderr"))
	}
}

func TestCmdRunas(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runas needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	res := cfnRun(t, nil, "cmd.run", []any{"sh -c 'id -u; echo $USER $HOME'", kw("runas", "nobody", "cwd", "/")}, nil)
	want := nobody.Uid + "\nnobody " + nobody.HomeDir
	if res.Return != want {
		t.Fatalf("runas: %q, want %q", res.Return, want)
	}
	res = cfnRun(t, nil, "cmd.run", []any{"id -u", kw("runas", "gsalt_no_such_user")}, nil)
	if res.Return != "ERROR: User 'gsalt_no_such_user' is not available" {
		t.Fatalf("missing user: %q", res.Return)
	}
	res = cfnRun(t, nil, "cmd.run", []any{"id -g", kw("group", "gsalt_no_such_group")}, nil)
	if res.Return != "ERROR: Group 'gsalt_no_such_group' is not available" {
		t.Fatalf("missing group: %q", res.Return)
	}
	// the user cannot write where root can
	dir := t.TempDir()
	res = cfnRun(t, nil, "cmd.retcode", []any{"touch " + filepath.Join(dir, "x"), kw("runas", "nobody", "cwd", "/")}, nil)
	if rc, _ := payload.AsInt(res.Return); rc == 0 {
		t.Fatal("nobody could write into a root-only directory")
	}
}

func TestCmdScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"script $1|$2\" \"$(basename \"$0\" | cut -c1-11)\"\necho e >&2\nexit 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := cfnRun(t, nil, "cmd.script", []any{script, "a 'b c'"}, cfnJobPub("cmd.script"))
	m, ok := res.Return.(*payload.Map)
	if !ok {
		t.Fatalf("return %#v", res.Return)
	}
	rc, _ := m.Int("retcode")
	if m.Str("stdout") != "script a|b c __salt.tmp." || m.Str("stderr") != "e" || rc != 3 || res.Retcode != 3 {
		t.Fatalf("script: %v (job retcode %d)", m, res.Retcode)
	}
	// the temporary copy is removed
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "__salt.tmp.*.sh")); len(left) > 0 {
		for _, l := range left {
			if fi, err := os.Stat(l); err == nil && time.Since(fi.ModTime()) < time.Minute {
				t.Fatalf("temporary script left behind: %v", left)
			}
		}
	}

	// salt:// through the "files" service
	fc := &cfnFileClient{path: script}
	env := &modules.Env{Services: map[string]any{"files": fc}}
	res = cfnRun(t, env, "cmd.script", []any{"salt://scripts/run.sh?saltenv=dev", kw("cwd", dir)}, nil)
	m = res.Return.(*payload.Map)
	if !strings.HasPrefix(m.Str("stdout"), "script |") || fc.saltenv != "base" || fc.src != "salt://scripts/run.sh?saltenv=dev" {
		t.Fatalf("salt:// script: %v, service saw %q %q", m, fc.src, fc.saltenv)
	}

	// no file client: Salt's cache_error return
	res = cfnRun(t, nil, "cmd.script", []any{"salt://scripts/run.sh"}, nil)
	want := payload.NewMap("pid", int64(0), "retcode", int64(1), "stdout", "", "stderr", "", "cache_error", true)
	if d := vectors.Equal(res.Return, want); d != "" || res.Retcode != 0 {
		t.Fatalf("cache_error: %s (retcode %d)", d, res.Retcode)
	}
	res = cfnRun(t, nil, "cmd.script", []any{"scripts/run.sh"}, nil)
	if res.Return != "ERROR: Path 'scripts/run.sh' is not absolute" {
		t.Fatalf("relative: %#v", res.Return)
	}
}

type cfnFileClient struct {
	path, src, saltenv string
}

func (f *cfnFileClient) CacheFile(_ context.Context, src, saltenv string) (string, error) {
	f.src, f.saltenv = src, saltenv
	return f.path, nil
}

func TestCmdRunBg(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	res := cfnRun(t, nil, "cmd.run_bg", []any{"sh -c 'sleep 0.2; echo ok > " + flag + "'"}, nil)
	m, ok := res.Return.(*payload.Map)
	if !ok || m.Len() != 1 {
		t.Fatalf("return %#v", res.Return)
	}
	if pid, _ := m.Int("pid"); pid <= 0 {
		t.Fatalf("pid %v", m)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		b, err := os.ReadFile(flag)
		return err == nil && string(b) == "ok\n"
	}, "the background command to run")
}

func TestCmdBlacklist(t *testing.T) {
	env := &modules.Env{Opts: payload.NewMap("cmd_blacklist_glob", []any{"rm *"})}
	res := cfnRun(t, env, "cmd.run", []any{"rm -rf /gsalt-nothing"}, cfnJobPub("cmd.run"))
	if res.Return != `ERROR: The shell command "rm -rf /gsalt-nothing" is not permitted` {
		t.Fatalf("blacklist: %#v", res.Return)
	}
	// a command that does not match runs
	res = cfnRun(t, env, "cmd.run", []any{"echo rm *"}, cfnJobPub("cmd.run"))
	if res.Return != "rm *" && !strings.HasPrefix(res.Return.(string), "rm ") {
		t.Fatalf("echo: %#v", res.Return)
	}
	env = &modules.Env{Opts: payload.NewMap("cmd_whitelist_glob", []any{"echo *"})}
	if res = cfnRun(t, env, "cmd.run", []any{"echo ok"}, cfnJobPub("cmd.run")); res.Return != "ok" {
		t.Fatalf("whitelisted: %#v", res.Return)
	}
	if res = cfnRun(t, env, "cmd.run", []any{"id"}, cfnJobPub("cmd.run")); res.Return != `ERROR: The shell command "id" is not permitted` {
		t.Fatalf("not whitelisted: %#v", res.Return)
	}
}

func TestCmdWhichPath(t *testing.T) {
	want, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh in PATH")
	}
	res := cfnRun(t, nil, "cmd.which", []any{"sh"}, nil)
	if res.Return != want {
		t.Fatalf("which sh: %#v, want %q", res.Return, want)
	}
	res = cfnRun(t, nil, "cmd.which_bin", []any{[]any{"gsalt_no_such_cmd", "sh"}}, nil)
	if res.Return != want {
		t.Fatalf("which_bin: %#v", res.Return)
	}
}
