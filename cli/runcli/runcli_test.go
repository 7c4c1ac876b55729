package runcli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/cli/saltcli/fakemaster"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/payload"
)

func run(t *testing.T, m *fakemaster.Master, o Options) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	o.ConfigDir = m.Dir
	o.Stdout, o.Stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := Run(ctx, o)
	return stdout.String(), stderr.String(), code
}

// runnerMaster answers runner commands by firing new/progress/ret events
// with the given return.
func runnerMaster(ret any, progress bool) fakemaster.Handler {
	return func(m *fakemaster.Master, load *payload.Map) any {
		if load.Str("cmd") != "runner" {
			return payload.NewMap()
		}
		if load.Str("key") != fakemaster.Key {
			return payload.NewMap("error", payload.NewMap("name", "SaltException", "message", `Authentication failure of type "user" occurred`))
		}
		jid := m.NextJID()
		tag := "salt/run/" + jid
		base := payload.NewMap("fun", "runner."+load.Str("fun"), "jid", jid, "user", load.Str("user"), "fun_args", []any{})
		m.Later(10*time.Millisecond, tag+"/new", base.Clone())
		if progress {
			m.Later(20*time.Millisecond, tag+"/progress", payload.NewMap("message", "half way", "outputter", "txt"))
		}
		done := base.Clone().Set("return", ret).Set("success", true)
		m.Later(30*time.Millisecond, tag+"/ret", done)
		return payload.NewMap("tag", tag, "jid", jid)
	}
}

func TestRunnerLoadAndOutput(t *testing.T) {
	m := fakemaster.Start(t, runnerMaster(payload.NewMap("args", []any{int64(1), "two"}, "kwargs", payload.NewMap("k", "v")), false), "")
	stdout, stderr, code := run(t, m, Options{Words: []string{"test.arg", "1", "two", "k=v"}})
	if code != 0 || stdout != "args:\n    - 1\n    - two\nkwargs:\n    ----------\n    k:\n        v\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	want := payload.NewMap("fun", "test.arg",
		"kwarg", payload.NewMap("kwarg", payload.NewMap("k", "v"), "arg", []any{int64(1), "two"}),
		"user", saltcli.SaltUser(), "key", fakemaster.Key, "cmd", "runner")
	got, _ := payload.Marshal(m.Loads()[0])
	exp, _ := payload.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("runner load\n got %x\nwant %x", got, exp)
	}
}

func TestRunnerCases(t *testing.T) {
	tests := []struct {
		name     string
		ret      any
		progress bool
		o        Options
		badKey   bool
		stdout   string
		code     int
	}{
		{"json", payload.NewMap("m1", true), false, Options{Words: []string{"manage.up"}, Out: "json"}, false, "{\n    \"m1\": true\n}\n", 0},
		{"outputter_wrapped", payload.NewMap("data", payload.NewMap("m1", "hi"), "outputter", "txt"), false, Options{Words: []string{"jobs.lookup_jid", "20261122050000000001"}}, false, "m1: hi\n", 0},
		{"retcode", payload.NewMap("retcode", int64(3), "comment", "x"), false, Options{Words: []string{"state.orch", "x"}}, false, "comment:\n    x\nretcode:\n    3\n", 3},
		{"progress", true, true, Options{Words: []string{"manage.status"}}, false, "suffix: progress\nevent: {'message': 'half way', 'outputter': 'txt'}\nTrue\n", 0},
		{"quiet", true, false, Options{Words: []string{"manage.up"}, Quiet: true}, false, "", 0},
		{"bad_key", nil, false, Options{Words: []string{"manage.up"}}, true, "Authentication failure of type \"user\" occurred\n", 1},
		{"no_function", nil, false, Options{}, false, "Must specify a function to run!\nex: manage.up\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := fakemaster.Start(t, runnerMaster(tc.ret, tc.progress), "")
			if tc.badKey {
				for _, u := range []string{"root", saltcli.SaltUser()} {
					_ = writeFile(m.Dir+"/cache/."+u+"_key", "nope")
				}
			}
			stdout, _, code := run(t, m, tc.o)
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit %d (want %d)\n got %q\nwant %q", code, tc.code, stdout, tc.stdout)
			}
		})
	}
}

func TestRunnerAsync(t *testing.T) {
	m := fakemaster.Start(t, runnerMaster(true, false), "")
	stdout, stderr, code := run(t, m, Options{Words: []string{"manage.up"}, Async: true})
	if code != 0 || stdout != "" || !strings.Contains(stderr, "running under tag salt/run/20261122050000000001") {
		t.Errorf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestRunnerTimeout(t *testing.T) {
	m := fakemaster.Start(t, func(m *fakemaster.Master, load *payload.Map) any {
		return payload.NewMap("tag", "salt/run/1", "jid", "1")
	}, "")
	stdout, _, code := run(t, m, Options{Words: []string{"manage.up"}, Timeout: 300 * time.Millisecond})
	if code != 1 || stdout != "RunnerClient job '1' timed out\n" {
		t.Errorf("exit %d stdout %q", code, stdout)
	}
}

// TestStateEvent streams the bus: matching events are printed like
// `salt-run state.event`, count stops it, and the runner's None follows.
func TestStateEvent(t *testing.T) {
	m := fakemaster.Start(t, runnerMaster(nil, false), "")
	fire := func() {
		m.Fire("salt/auth", payload.NewMap("act", "accept", "id", "m1"))
		m.Fire("my/tag", payload.NewMap("b", []any{int64(1), "é"}, "a", payload.NewMap("z", nil)))
		m.Fire("other/tag", payload.NewMap("x", int64(1)))
		m.Fire("my/second", payload.NewMap("k", 1.5))
		m.Fire("my/third", payload.NewMap("k", int64(3)))
	}
	m.AfterFunc(200*time.Millisecond, fire)
	stdout, _, code := run(t, m, Options{Words: []string{"state.event", "my/*", "count=2", "pretty=True"}})
	stamp := func(s string) string {
		// Drop the _stamp lines, which carry the time.
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, `"_stamp"`) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	want := "my/tag\t{\n    \"a\": {\n        \"z\": null\n    },\n    \"b\": [\n        1,\n        \"é\"\n    ]\n}\nmy/second\t{\n    \"k\": 1.5\n}\nNone\n"
	if code != 0 || stamp(stdout) != want {
		t.Errorf("exit %d\n got %q\nwant %q", code, stamp(stdout), want)
	}

	m.AfterFunc(200*time.Millisecond, fire)
	stdout, _, code = run(t, m, Options{Words: []string{"state.event", `salt/.*`, "count=1"}, Quiet: true})
	if code != 0 || !strings.HasPrefix(stdout, `salt/auth	{"act": "accept", "id": "m1", "_stamp": "`) {
		t.Errorf("regex tagmatch: exit %d stdout %q", code, stdout)
	}
}

func TestExprMatch(t *testing.T) {
	tests := []struct {
		tag, expr string
		want      bool
	}{
		{"salt/job/1/ret/m1", "salt/job/*", true},
		{"salt/job/1/ret/m1", "salt/job/[0-9]/ret/.*", true},
		{"salt/job/1/ret/m1", "salt/job", false},
		{"salt/job/1/ret/m1", "job", false},
		{"my/tag", "my/tag", true},
		{"my/tag", "*", true},
		{"my/tagx", "my/tag", false},
		{"my/tag\n", `my/tag`, false},
	}
	for _, tc := range tests {
		if got := stringutils.ExprMatch(tc.tag, tc.expr); got != tc.want {
			t.Errorf("stringutils.ExprMatch(%q, %q) = %v", tc.tag, tc.expr, got)
		}
	}
}

func TestFormatEvent(t *testing.T) {
	ev := event.Event{Tag: "t", Data: payload.NewMap("b", int64(1), "a", "x")}
	if got := FormatEvent(ev, false); got != "t\t{\"b\": 1, \"a\": \"x\"}" {
		t.Errorf("compact: %q", got)
	}
	if got := FormatEvent(ev, true); got != "t\t{\n    \"a\": \"x\",\n    \"b\": 1\n}" {
		t.Errorf("pretty: %q", got)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
