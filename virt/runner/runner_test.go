package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/virt/runner"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// fakeMaster answers the runner's jobs from a table: hypervisors with
// their virt.full_info, and a virt.init/virt.purge result.
type fakeMaster struct {
	mu       sync.Mutex
	pki      string
	hosts    map[string]*payload.Map // id → full_info
	initRet  any
	jobs     []runners.Job
	events   []string
	data     []*payload.Map
	deleted  []string
	progress []string
}

func (f *fakeMaster) Accepted() ([]string, error)           { return nil, nil }
func (f *fakeMaster) Connected() (map[string]string, error) { return nil, nil }
func (f *fakeMaster) Jobs() runners.JobCache                { return nil }
func (f *fakeMaster) Opt(key string) (any, bool)            { return f.pki, key == "pki_dir" }
func (f *fakeMaster) FireEvent(tag string, data *payload.Map) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, tag)
	f.data = append(f.data, data)
	return nil
}
func (f *fakeMaster) DeleteKey(id string) error {
	f.deleted = append(f.deleted, id)
	return os.Remove(filepath.Join(f.pki, "minions", id))
}

func (f *fakeMaster) RunJob(_ context.Context, job runners.Job) (*runners.JobResult, error) {
	f.jobs = append(f.jobs, job)
	res := &runners.JobResult{JID: "20260101000000000000", Returns: map[string]*payload.Map{}}
	switch {
	case job.TgtType == "grain" && job.Tgt == "virtual:physical":
		if len(f.hosts) == 0 {
			return nil, runners.ErrNoMinions
		}
		for id, info := range f.hosts {
			v := any(info)
			if job.Fun == "virt.vm_info" {
				v = info.Map("vm_info")
			}
			res.Returns[id] = payload.NewMap("return", v, "retcode", int64(0))
		}
	case job.Fun == "virt.get_macs":
		res.Returns[payload.Text(job.Tgt)] = payload.NewMap("return", []any{"52:54:00:12:34:56"}, "retcode", int64(0))
	case job.Fun == "virt.init":
		res.Returns[payload.Text(job.Tgt)] = payload.NewMap("return", f.initRet, "retcode", int64(0))
	default:
		res.Returns[payload.Text(job.Tgt)] = payload.NewMap("return", true, "retcode", int64(0))
	}
	return res, nil
}

func hostInfo(freemem any, vms ...string) *payload.Map {
	vi := payload.NewMap()
	for _, v := range vms {
		vi.Set(v, payload.NewMap("state", "running", "disks", payload.NewMap(),
			"nics", payload.NewMap("52:54:00:00:00:01", payload.NewMap("type", "bridge"))))
	}
	return payload.NewMap("freecpu", int64(4), "freemem", freemem, "node_info", payload.NewMap(), "vm_info", vi)
}

func runRunner(t *testing.T, f *fakeMaster, fun string, args ...any) any {
	t.Helper()
	reg := runners.NewRegistry()
	for _, rn := range runner.RunnerFunctions() {
		if err := reg.Register(rn); err != nil {
			t.Fatal(err)
		}
	}
	c := &runners.Call{Env: f, Progress: func(d *payload.Map) {
		f.progress = append(f.progress, d.Str("message")+d.Str("error"))
	}}
	res := reg.Run(context.Background(), fun, args, nil, c)
	return res.Return
}

func newFake(t *testing.T) *fakeMaster {
	pki := t.TempDir()
	if err := os.MkdirAll(filepath.Join(pki, "minions"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &fakeMaster{pki: pki, initRet: true, hosts: map[string]*payload.Map{
		"hv-a": hostInfo(int64(1000), "old"),
		"hv-b": hostInfo(3000.5),
		"hv-c": hostInfo(int64(2000)),
	}}
}

func TestRunnerInitPicksHostAndPreAcceptsKey(t *testing.T) {
	f := newFake(t)
	if got := runRunner(t, f, "virt.next_host"); got != "hv-b" {
		t.Fatalf("next_host %v, want hv-b (most free memory)", got)
	}
	f.jobs = nil
	if got := runRunner(t, f, "virt.init", "vm1", int64(1), int64(256), "salt://images/tiny.qcow2"); got != "good" {
		t.Fatalf("init: %v (progress %v)", got, f.progress)
	}
	initJob := f.jobs[len(f.jobs)-2]
	if last := f.jobs[len(f.jobs)-1]; last.Fun != "virt.get_macs" || last.Tgt != "hv-b" {
		t.Errorf("after virt.init: %+v, want virt.get_macs on hv-b", last)
	}
	if initJob.Fun != "virt.init" || initJob.Tgt != "hv-b" {
		t.Fatalf("virt.init job %+v", initJob)
	}
	kw := initJob.Arg[3].(*payload.Map)
	pub, err := os.ReadFile(filepath.Join(f.pki, "minions", "vm1"))
	if err != nil {
		t.Fatalf("key not pre-accepted: %v", err)
	}
	if kw.Str("pub_key") != string(pub) {
		t.Error("the pre-accepted key is not the one handed to the hypervisor")
	}
	priv, err := crypt.ParsePrivateKeyPEM([]byte(kw.Str("priv_key")))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := crypt.ParsePublicKeyPEM(pub); err != nil || !p.Equal(&priv.PublicKey) {
		t.Errorf("key pair mismatch: %v", err)
	}
	if kw.Str("image") != "salt://images/tiny.qcow2" || kw.Has("hypervisor") {
		t.Errorf("virt.init kwargs %v", kw)
	}
	if strings.Join(f.events, ",") != "salt/cloud/vm1/creating,salt/cloud/vm1/created" {
		t.Fatalf("events %v", f.events)
	}
	if d := f.data[1]; d.Str("name") != "vm1" || d.Str("host") != "hv-b" || fmt.Sprint(d.List("macs")) != "[52:54:00:12:34:56]" {
		t.Errorf("created event data %v", d)
	}
	if !strings.Contains(strings.Join(f.progress, "|"), "VM vm1 initialized on host hv-b") {
		t.Errorf("progress %v", f.progress)
	}
}

func TestRunnerInitFailures(t *testing.T) {
	cases := []struct {
		name    string
		args    []any
		initRet any
		want    string
		keyLeft bool
	}{
		{"duplicate name", []any{"old", int64(1), int64(256), "img"}, true, "fail", false},
		{"unknown host", []any{"vm2", int64(1), int64(256), "img", payload.NewMap("__kwarg__", true, "host", "nope")}, true, "fail", false},
		{"hypervisor error", []any{"vm3", int64(1), int64(256), "img"}, "ERROR: Problem while copying image. img - not found", "fail", false},
		{"hypervisor false", []any{"vm4", int64(1), int64(256), "img"}, false, "fail", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.initRet = tc.initRet
			if got := runRunner(t, f, "virt.init", tc.args...); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			left, _ := os.ReadDir(filepath.Join(f.pki, "minions"))
			if (len(left) > 0) != tc.keyLeft {
				t.Errorf("keys left: %v", left)
			}
		})
	}
}

func TestRunnerPurgeAndActions(t *testing.T) {
	f := newFake(t)
	if err := os.WriteFile(filepath.Join(f.pki, "minions", "old"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runRunner(t, f, "virt.pause", "old"); got != "good" {
		t.Errorf("pause: %v", got)
	}
	if got := runRunner(t, f, "virt.resume", "old"); got != "bad state" {
		t.Errorf("resume of a running VM: %v", got)
	}
	if got := runRunner(t, f, "virt.start", "old"); got != "bad state" {
		t.Errorf("start of a running VM: %v", got)
	}
	if got := runRunner(t, f, "virt.resume", "nosuch"); got != "not found" {
		t.Errorf("resume unknown: %v", got)
	}
	if got := runRunner(t, f, "virt.purge", "nosuch"); got != "fail" {
		t.Errorf("purge unknown: %v", got)
	}
	f.events = nil
	if got := runRunner(t, f, "virt.purge", "old"); got != "good" {
		t.Fatalf("purge: %v", got)
	}
	last := f.jobs[len(f.jobs)-1]
	if last.Fun != "virt.purge" || last.Tgt != "hv-a" || len(last.Arg) != 1 {
		t.Errorf("purge job %+v (gsalt does not pass dirs=True)", last)
	}
	if _, err := os.Stat(filepath.Join(f.pki, "minions", "old")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("key not deleted: %v", err)
	}
	if strings.Join(f.events, ",") != "salt/cloud/old/destroying,salt/cloud/old/destroyed" {
		t.Fatalf("events %v", f.events)
	}
	if d := f.data[1]; d.Str("name") != "old" || d.Str("host") != "hv-a" || fmt.Sprint(d.List("macs")) != "[52:54:00:00:00:01]" {
		t.Errorf("destroyed event data %v", d)
	}
	l := runRunner(t, f, "virt.list").(*payload.Map)
	if l.Map("hv-a") == nil || payload.Text(l.Map("hv-a").List("running")[0]) != "old" {
		t.Errorf("list %v", l)
	}
	hi := runRunner(t, f, "virt.host_info").(*payload.Map)
	if hi.Map("hv-b").Has("vm_info") || !hi.Map("hv-b").Has("freemem") {
		t.Errorf("host_info %v", hi)
	}
	none := &fakeMaster{pki: f.pki}
	if got := runRunner(t, none, "virt.query"); got.(*payload.Map).Len() != 0 {
		t.Errorf("query with no hypervisors: %v", got)
	}
}
