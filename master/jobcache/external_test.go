package jobcache

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/wire/payload"
)

// fakeExt is an External holding jobs in memory; down makes reads fail.
type fakeExt struct {
	jobs map[string]*Job
	down bool
}

func (f *fakeExt) Name() string                  { return "fake" }
func (f *fakeExt) SaveLoad(string, *payload.Map) {}
func (f *fakeExt) Return(*payload.Map)           {}
func (f *fakeExt) Clean(context.Context) error   { return nil }
func (f *fakeExt) Close() error                  { return nil }
func (f *fakeExt) List(context.Context) ([]*Job, error) {
	if f.down {
		return nil, returners.ErrUnavailable
	}
	var out []*Job
	for _, j := range f.jobs {
		out = append(out, &Job{JID: j.JID, Load: j.Load})
	}
	return out, nil
}
func (f *fakeExt) Get(_ context.Context, jid string) (*Job, error) {
	if f.down {
		return nil, returners.ErrUnavailable
	}
	if j, ok := f.jobs[jid]; ok {
		return j, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoJob, jid)
}

// TestView: the jobs runners' read path over the local store and an
// external job cache.
func TestView(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "jobs.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const local, shared, remote = "20260101000000000001", "20260101000000000002", "20260101000000000003"
	for _, jid := range []string{local, shared} {
		if err := c.SaveLoad(jid, payload.NewMap("fun", "test.ping", "tgt", "here"), []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if err := c.SaveReturn(jid, "a", payload.NewMap("return", "local")); err != nil {
			t.Fatal(err)
		}
	}
	ext := &fakeExt{jobs: map[string]*Job{
		shared: {JID: shared, Load: payload.NewMap("fun", "test.ping", "tgt", "overwritten"),
			Returns: map[string]*payload.Map{"a": payload.NewMap("return", "ext"), "b": payload.NewMap("return", "other master")}},
		remote: {JID: remote, Load: payload.NewMap("fun", "test.arg"), Returns: map[string]*payload.Map{"c": payload.NewMap("return", true)}},
	}}
	v := &View{Local: c, Ext: ext, Timeout: time.Second}
	jobs, err := v.List()
	if err != nil || len(jobs) != 3 || jobs[0].JID != local || jobs[2].JID != remote {
		t.Fatalf("List = %v, %v", jobs, err)
	}
	tests := []struct {
		jid, wantTgt string
		wantRets     map[string]any
	}{
		{local, "here", map[string]any{"a": "local"}},
		{shared, "here", map[string]any{"a": "local", "b": "other master"}},
		{remote, "", map[string]any{"c": true}},
	}
	for _, tc := range tests {
		j, err := v.Get(tc.jid)
		if err != nil {
			t.Fatalf("Get %s: %v", tc.jid, err)
		}
		if j.Load.Str("tgt") != tc.wantTgt || len(j.Returns) != len(tc.wantRets) {
			t.Errorf("Get %s: load %v returns %v", tc.jid, j.Load, j.Returns)
		}
		for id, want := range tc.wantRets {
			if got := mustGet(j.Returns[id], "return"); payload.Text(got) != payload.Text(want) {
				t.Errorf("Get %s: return of %s = %v, want %v", tc.jid, id, got, want)
			}
		}
	}
	if _, err := v.Get("20260101000000000009"); !errors.Is(err, ErrNoJob) {
		t.Fatalf("Get(missing): %v", err)
	}
	// The external cache down: the local store answers alone.
	ext.down = true
	if jobs, err := v.List(); err != nil || len(jobs) != 2 {
		t.Fatalf("List while down = %v, %v", jobs, err)
	}
	if j, err := v.Get(shared); err != nil || len(j.Returns) != 1 {
		t.Fatalf("Get while down = %v, %v", j, err)
	}
}
