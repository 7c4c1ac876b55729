package saltcli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/cli/saltcli/fakemaster"
	"github.com/gsalt/gsalt/wire/payload"
)

// simMinion scripts one minion behind the fake master.
type simMinion struct {
	ret     any
	delay   time.Duration
	retcode int
	out     string
	// dead minions never return and answer find_job with nothing.
	dead bool
}

// sim is a scripted master: known minions, their behaviour, and the
// state find_job needs.
type sim struct {
	minions map[string]simMinion
	order   []string

	mu       sync.Mutex
	returned map[string]bool // jid/id
}

func newSim(order []string, minions map[string]simMinion) *sim {
	return &sim{minions: minions, order: order, returned: map[string]bool{}}
}

func strs(l []any) []string {
	out := make([]string, len(l))
	for i, e := range l {
		out[i], _ = e.(string)
	}
	return out
}

func anyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func (s *sim) handle(m *fakemaster.Master, load *payload.Map) any {
	if load.Str("cmd") != "publish" {
		return payload.NewMap()
	}
	if load.Str("key") != fakemaster.Key {
		return fakemaster.AuthError()
	}
	var targets, missing []string
	switch tgt, _ := load.Get("tgt"); x := tgt.(type) {
	case []any:
		for _, id := range strs(x) {
			if _, ok := s.minions[id]; ok {
				targets = append(targets, id)
			} else {
				missing = append(missing, id)
			}
		}
	case string:
		for _, id := range s.order {
			if x == "*" || x == id {
				targets = append(targets, id)
			}
		}
	}
	if len(targets) == 0 {
		return payload.NewMap("enc", "clear", "load", payload.NewMap("jid", nil, "minions", []any{}, "error", "Master could not resolve minions for target x"))
	}
	jid := m.NextJID()
	fun := load.Str("fun")
	m.Fire("salt/job/"+jid+"/new", payload.NewMap("jid", jid, "tgt_type", load.Str("tgt_type"), "fun", fun, "minions", anyList(targets), "missing", anyList(missing)))
	if fun == "saltutil.find_job" {
		orig := payload.Text(load.List("arg")[0])
		for _, id := range targets {
			var ret any = payload.NewMap()
			s.mu.Lock()
			running := !s.minions[id].dead && !s.returned[orig+"/"+id]
			s.mu.Unlock()
			if running {
				ret = payload.NewMap("pid", int64(4242), "fun", "test.sleep", "jid", orig)
			}
			m.Fire("salt/job/"+jid+"/ret/"+id, fakemaster.Return(id, jid, fun, ret, 0))
		}
		return fakemaster.PublishReply(jid, targets)
	}
	for _, id := range targets {
		sm := s.minions[id]
		if sm.dead {
			continue
		}
		ret := sm.ret
		if fun == "test.ping" && ret == nil {
			ret = true
		}
		d := fakemaster.Return(id, jid, fun, ret, sm.retcode)
		if sm.out != "" {
			d.Set("out", sm.out)
		}
		key := jid + "/" + id
		tag := "salt/job/" + jid + "/ret/" + id
		m.AfterFunc(sm.delay, func() {
			s.mu.Lock()
			s.returned[key] = true
			s.mu.Unlock()
			m.Fire(tag, d)
		})
	}
	return fakemaster.PublishReply(jid, targets)
}

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

func twoMinions() *sim {
	return newSim([]string{"m1", "m2"}, map[string]simMinion{
		"m1": {},
		"m2": {delay: 100 * time.Millisecond},
	})
}

// TestPublishLoad checks the clear publish load byte for byte against the
// one the salt CLI sends (capture testping.jsonl #5), apart from the key.
func TestPublishLoad(t *testing.T) {
	m := fakemaster.Start(t, twoMinions().handle, "timeout: 5\ngather_job_timeout: 1\n")
	stdout, _, code := run(t, m, Options{Words: []string{"*", "test.ping"}})
	if code != 0 || stdout != "m1:\n    True\nm2:\n    True\n" {
		t.Fatalf("exit %d, output %q", code, stdout)
	}
	loads := m.Loads()
	if len(loads) != 1 {
		t.Fatalf("%d loads", len(loads))
	}
	want := payload.NewMap("cmd", "publish", "tgt", "*", "fun", "test.ping", "arg", []any{}, "key", fakemaster.Key,
		"tgt_type", "glob", "ret", "", "timeout", int64(5), "jid", "",
		"kwargs", payload.NewMap("show_timeout", true, "show_jid", false, "delimiter", ":"), "user", SaltUser())
	got, _ := payload.Marshal(loads[0])
	exp, _ := payload.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("publish load\n got %x\nwant %x", got, exp)
	}
}

func TestRunOutputs(t *testing.T) {
	one := newSim([]string{"m1"}, map[string]simMinion{"m1": {ret: payload.NewMap("b", int64(1), "a", []any{"x", nil})}})
	rc := newSim([]string{"m1", "m2"}, map[string]simMinion{"m1": {ret: true, retcode: 3}, "m2": {ret: false, retcode: 0, delay: 50 * time.Millisecond}})
	outMinion := newSim([]string{"m1"}, map[string]simMinion{"m1": {ret: "ERROR: boom", retcode: 1, out: "txt"}})
	multi := newSim([]string{"m1"}, map[string]simMinion{"m1": {ret: payload.NewMap("test.ping", true, "test.echo", "hi"), retcode: 0}})
	two := func() *sim { return twoMinions() }
	ip := func(i int) *int { return &i }
	tests := []struct {
		name         string
		sim          *sim
		o            Options
		stdout       string
		stderrSubstr string
		code         int
	}{
		{"json", one, Options{Words: []string{"m1", "test.x"}, Out: "json"}, "{\n    \"m1\": {\n        \"b\": 1,\n        \"a\": [\n            \"x\",\n            null\n        ]\n    }\n}\n", "", 0},
		{"json_indent_neg", one, Options{Words: []string{"m1", "test.x"}, Out: "json", OutIndent: ip(-1)}, "{\"m1\": {\"b\": 1, \"a\": [\"x\", null]}}\n", "", 0},
		{"yaml", one, Options{Words: []string{"m1", "test.x"}, Out: "yaml"}, "m1:\n  a:\n  - x\n  - null\n  b: 1\n", "", 0},
		{"raw", one, Options{Words: []string{"m1", "test.x"}, Out: "raw"}, "{'m1': {'b': 1, 'a': ['x', None]}}\n", "", 0},
		{"txt", one, Options{Words: []string{"m1", "test.x"}, Out: "txt"}, "m1: {'b': 1, 'a': ['x', None]}\n", "", 0},
		{"nested_color", one, Options{Words: []string{"m1", "test.x"}, ForceColor: true},
			"\x1b[0;36mm1\x1b[0;0m:\n    \x1b[0;36m----------\x1b[0;0m\n    \x1b[0;36ma\x1b[0;0m:\n        \x1b[0;32m- x\x1b[0;0m\n        \x1b[0;1;33m- None\x1b[0;0m\n    \x1b[0;36mb\x1b[0;0m:\n        \x1b[0;1;33m1\x1b[0;0m\n", "", 0},
		{"terminal_no_color", one, Options{Words: []string{"m1", "test.x"}, IsTerminal: true, NoColor: true}, "m1:\n    ----------\n    a:\n        - x\n        - None\n    b:\n        1\n", "", 0},
		{"newline_values_only", two(), Options{Words: []string{"*", "test.ping"}, Out: "newline_values_only"}, "True\nTrue\n", "", 0},
		{"verbose", two(), Options{Words: []string{"*", "test.ping"}, Verbose: true}, "Executing job with jid 20261122050000000001\n-------------------------------------------\n\nm1:\n    True\nm2:\n    True\n", "", 0},
		{"show_jid", two(), Options{Words: []string{"*", "test.ping"}, ShowJID: true}, "jid: 20261122050000000001\nm1:\n    True\nm2:\n    True\n", "", 0},
		{"retcode", rc, Options{Words: []string{"*", "test.x"}}, "m1:\n    True\nm2:\n    False\n", "ERROR: Minions returned with non-zero exit code", 1},
		{"retcode_passthrough", rc, Options{Words: []string{"*", "test.x"}, RetcodePassthrough: true}, "m1:\n    True\nm2:\n    False\n", "ERROR: Minions returned with non-zero exit code", 3},
		{"minion_outputter", outMinion, Options{Words: []string{"m1", "test.x"}}, "m1: ERROR: boom\n", "ERROR: Minions returned", 1},
		{"out_overrides_minion", outMinion, Options{Words: []string{"m1", "test.x"}, Out: "json"}, "{\n    \"m1\": \"ERROR: boom\"\n}\n", "", 1},
		{"multi_function", multi, Options{Words: []string{"m1", "test.ping,test.echo", ",", "hi"}}, "m1:\n    ----------\n    test.echo:\n        hi\n    test.ping:\n        True\n", "", 0},
		{"no_minions", two(), Options{Words: []string{"ghost", "test.ping"}}, TextNoMinions + "\n", "ERROR: No return received", 2},
		{"no_minions_json", two(), Options{Words: []string{"ghost", "test.ping"}, Out: "json"}, TextNoMinions + "\n{}\n", "ERROR: No return received", 2},
		{"missing_list", two(), Options{Words: []string{"m1,ghost", "test.ping"}, TargetType: "list"},
			"m1:\n    True\nghost:\n    Minion did not return. [No response]\n    The minions may not have all finished running and any remaining minions will return upon completion. To look up the return data for this job later, run the following command:\n    \n    gsalt-run jobs.lookup_jid 20261122050000000001\n",
			"ERROR: Minions returned with non-zero exit code", 1},
		{"async", two(), Options{Words: []string{"*", "test.ping"}, Async: true}, "Executed command with job ID: 20261122050000000001\n", "", 0},
		{"async_no_minions", two(), Options{Words: []string{"ghost", "test.ping"}, Async: true}, TextNoMinions + "\nExecuted command with job ID: 0\n", "", 0},
		{"static", two(), Options{Words: []string{"*", "test.echo", "hi"}, Static: true, Out: "json"}, "{\n    \"m1\": null,\n    \"m2\": null\n}\n", "", 0},
		{"usage", two(), Options{Words: []string{"m1"}}, "", "Incomplete options passed.", 42},
		{"bad_nodegroup", two(), Options{Words: []string{"web", "test.ping"}, TargetType: "nodegroup"}, "Node group web unavailable in ", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := fakemaster.Start(t, tc.sim.handle, "timeout: 2\ngather_job_timeout: 1\n")
			stdout, stderr, code := run(t, m, tc.o)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if strings.HasSuffix(tc.stdout, " ") {
				if !strings.HasPrefix(stdout, tc.stdout) {
					t.Errorf("stdout %q, want prefix %q", stdout, tc.stdout)
				}
			} else if stdout != tc.stdout {
				t.Errorf("stdout\n got %q\nwant %q", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderrSubstr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderrSubstr)
			}
		})
	}
}

// TestNodegroups: -N and N@ words are expanded from the master config
// before publishing, as LocalClient._prep_pub does.
func TestNodegroups(t *testing.T) {
	m := fakemaster.Start(t, twoMinions().handle, "timeout: 2\nnodegroups:\n  web: 'L@m1,m2'\n  all: 'N@web or m*'\n")
	for _, tc := range []struct {
		o       Options
		tgt     string
		tgtType string
	}{
		{Options{Words: []string{"web", "test.ping"}, TargetType: "nodegroup"}, "L@m1,m2", "compound"},
		{Options{Words: []string{"N@all and not G@os:x", "test.ping"}, TargetType: "compound"}, "( ( L@m1,m2 ) or m* ) and not G@os:x", "compound"},
		{Options{Words: []string{"m*", "test.ping"}, TargetType: "pcre"}, "m*", "pcre"},
	} {
		before := len(m.Loads())
		_, stderr, _ := run(t, m, tc.o)
		loads := m.Loads()
		if len(loads) != before+1 {
			t.Errorf("%v: %d publishes (%s)", tc.o.Words, len(loads)-before, stderr)
			continue
		}
		l := loads[len(loads)-1]
		if l.Str("tgt") != tc.tgt || l.Str("tgt_type") != tc.tgtType {
			t.Errorf("%v: published tgt %q type %q, want %q %q", tc.o.Words, l.Str("tgt"), l.Str("tgt_type"), tc.tgt, tc.tgtType)
		}
	}
}

func TestStaticLoads(t *testing.T) {
	s := twoMinions()
	m := fakemaster.Start(t, s.handle, "timeout: 2\ngather_job_timeout: 7\n")
	stdout, _, code := run(t, m, Options{Words: []string{"*", "test.echo", "hi"}, Static: true})
	if code != 0 || stdout != "m1:\n    None\nm2:\n    None\n" {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	loads := m.Loads()
	if len(loads) != 2 {
		t.Fatalf("%d loads", len(loads))
	}
	ping, job := loads[0], loads[1]
	if ping.Str("fun") != "test.ping" || dump(ping.Map("kwargs")) != `{"gather_job_timeout":7,"yield_pub_data":true}` {
		t.Errorf("ping load %s", dump(ping))
	}
	if job.Str("tgt_type") != "list" || dump(job.List("tgt")) != `["m2","m1"]` || dump(job.Map("kwargs")) != `{"raw":false,"gather_job_timeout":7}` {
		t.Errorf("job load %s", dump(job))
	}
}

// TestBadKey: the master refuses the key; Salt's message is printed.
func TestBadKey(t *testing.T) {
	m := fakemaster.Start(t, twoMinions().handle, "")
	entries, _ := filepath.Glob(filepath.Join(m.Dir, "cache", ".*_key"))
	for _, e := range entries {
		if err := os.WriteFile(e, []byte("wrong"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stdout, _, code := run(t, m, Options{Words: []string{"*", "test.ping"}})
	if stdout != "Authentication error occurred.\n" || code != 1 {
		t.Errorf("exit %d stdout %q", code, stdout)
	}
	if k := m.Loads()[0].Str("key"); k != "wrong" {
		t.Errorf("sent key %q", k)
	}
	stdout, stderr, code := run(t, m, Options{Words: []string{"*", "test.ping"}, Async: true})
	if stdout != "" || stderr != "ERROR: Authentication error occurred.\n" || code != 1 {
		t.Errorf("async: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// TestNoMaster: nothing listens on the event bus.
func TestNoMaster(t *testing.T) {
	m := fakemaster.Start(t, twoMinions().handle, "")
	if err := os.Remove(filepath.Join(m.SockDir, "master_event_pub.ipc")); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, m, Options{Words: []string{"*", "test.ping"}})
	if stdout != TextNoMaster+"\n" || code != 1 {
		t.Errorf("exit %d stdout %q", code, stdout)
	}
}

// TestFindJobKeepsWaiting: a minion still running the job after the
// timeout is asked with saltutil.find_job and then waited for.
func TestFindJobKeepsWaiting(t *testing.T) {
	s := newSim([]string{"m1"}, map[string]simMinion{"m1": {ret: true, delay: 2500 * time.Millisecond}})
	m := fakemaster.Start(t, s.handle, "gather_job_timeout: 1\n")
	start := time.Now()
	stdout, _, code := run(t, m, Options{Words: []string{"m1", "test.sleep", "3"}, Timeout: 1})
	if code != 0 || stdout != "m1:\n    True\n" {
		t.Fatalf("exit %d stdout %q", code, stdout)
	}
	if el := time.Since(start); el < 2500*time.Millisecond {
		t.Errorf("returned after %v, before the minion did", el)
	}
	loads := m.Loads()
	if len(loads) < 2 {
		t.Fatalf("no find_job publish: %d loads", len(loads))
	}
	fj := loads[1]
	want := payload.NewMap("cmd", "publish", "tgt", []any{"m1"}, "fun", "saltutil.find_job", "arg", []any{"20261122050000000001"},
		"key", fakemaster.Key, "tgt_type", "list", "ret", "", "timeout", int64(1), "jid", "",
		"kwargs", payload.NewMap("delimiter", ":"), "user", SaltUser())
	got, _ := payload.Marshal(fj)
	exp, _ := payload.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("find_job load\n got %s\nwant %s", dump(fj), dump(want))
	}
}

// TestNoResponse: a minion that never answers is reported after the
// timeout and the find_job round.
func TestNoResponse(t *testing.T) {
	s := newSim([]string{"m1", "m2"}, map[string]simMinion{"m1": {}, "m2": {dead: true}})
	m := fakemaster.Start(t, s.handle, "timeout: 1\ngather_job_timeout: 1\n")
	stdout, stderr, code := run(t, m, Options{Words: []string{"*", "test.ping"}, Out: "json", OutIndent: nil})
	want := "{\n    \"m1\": true\n}\n{\n    \"m2\": \"Minion did not return. [No response]\\nThe minions may not have all finished running and any remaining minions will return upon completion. To look up the return data for this job later, run the following command:\\n\\ngsalt-run jobs.lookup_jid 20261122050000000001\"\n}\n"
	if code != 1 || stdout != want || stderr != "ERROR: Minions returned with non-zero exit code\n" {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	// --hide-timeout: the silent minion is not reported.
	stdout, _, code = run(t, m, Options{Words: []string{"*", "test.ping"}, HideTimeout: true})
	if code != 0 || stdout != "m1:\n    True\n" {
		t.Errorf("hide-timeout: exit %d stdout %q", code, stdout)
	}
}

// TestOutFile: --out-file truncates once, then every return is appended.
func TestOutFile(t *testing.T) {
	m := fakemaster.Start(t, twoMinions().handle, "timeout: 2\n")
	f := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(f, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, m, Options{Words: []string{"*", "test.ping"}, OutFile: f})
	b, _ := os.ReadFile(f)
	if code != 0 || stdout != "" || string(b) != "m1:\n    True\nm2:\n    True\n" {
		t.Errorf("exit %d stdout %q file %q", code, stdout, b)
	}
	_, _, _ = run(t, m, Options{Words: []string{"m1", "test.ping"}, OutFile: f, OutFileAppend: true, Out: "json", OutIndent: new(int)})
	b, _ = os.ReadFile(f)
	if !strings.HasSuffix(string(b), "True\n{\n\"m1\": true\n}\n") {
		t.Errorf("appended file %q", b)
	}
}

func TestRetcodeOf(t *testing.T) {
	tests := []struct {
		v    any
		want int
	}{
		{payload.NewMap("ret", true), 0},
		{payload.NewMap("ret", true, "retcode", int64(2)), 2},
		{payload.NewMap("retcode", payload.NewMap("a", int64(0), "b", int64(5))), 5},
		{false, 1},
		{true, 0},
		{"x", 0},
	}
	for _, tc := range tests {
		if got := RetcodeOf(tc.v); got != tc.want {
			b, _ := json.Marshal(tc.v)
			t.Errorf("RetcodeOf(%s) = %d, want %d", b, got, tc.want)
		}
	}
}
