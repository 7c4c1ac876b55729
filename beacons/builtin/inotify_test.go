package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/beacons/internal/golden"
	"github.com/gsalt/gsalt/wire/payload"
)

// doOps applies the scenario operations of the inotify golden under base.
func doOps(t *testing.T, base string, ops []any) {
	t.Helper()
	for _, o := range ops {
		op := o.([]any)
		kind, p := op[0].(string), filepath.Join(base, op[1].(string))
		var err error
		switch kind {
		case "mkdir":
			err = os.Mkdir(p, 0o755)
		case "write":
			err = os.WriteFile(p, []byte(op[2].(string)), 0o644)
		case "append":
			var f *os.File
			if f, err = os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0); err == nil {
				_, err = f.WriteString(op[2].(string))
				f.Close()
			}
		case "rename":
			err = os.Rename(p, filepath.Join(base, op[2].(string)))
		case "chmod":
			err = os.Chmod(p, os.FileMode(op[2].(int64)))
		case "remove":
			err = os.Remove(p)
		case "rmtree":
			err = os.RemoveAll(p)
		default:
			t.Fatalf("unknown op %s", kind)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// collect runs the beacon until it has reported want events (or a
// generous deadline passes; a missing event then fails the comparison).
func collect(t *testing.T, b beacons.Beacon, cfg any, want int) []any {
	t.Helper()
	var got []any
	if want == 0 {
		time.Sleep(50 * time.Millisecond) // a negative check: give a wrong event time to arrive
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := b.Beacon(context.Background(), &beacons.Request{Config: payload.DeepClone(cfg), Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out {
			got = append(got, m)
		}
		if len(got) >= want || time.Now().After(deadline) {
			// One more short read, a moment later, catches unexpected
			// extra events (a negative check).
			time.Sleep(20 * time.Millisecond)
			out, _ = b.Beacon(context.Background(), &beacons.Request{Config: payload.DeepClone(cfg), Now: time.Now()})
			for _, m := range out {
				got = append(got, m)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond) // poll interval; the deadline above bounds the loop
	}
}

// TestInotifyGolden replays the scenario gen_goldens.py ran through Salt's
// pyinotify beacon: create/modify/delete, recurse, auto_add, the three
// exclude forms, renames, attribute changes and a path appearing later.
func TestInotifyGolden(t *testing.T) {
	g := loadGoldens(t).Map("inotify")
	base := t.TempDir()
	decode := func(v any) any {
		out, err := golden.Decode([]byte(strings.ReplaceAll(golden.PyJSON(v), "$DIR", base)))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cfg := decode(g.List("config"))
	doOps(t, base, g.List("setup"))
	b := builtin.Inotify().New(testEnv(nil))
	defer b.(beacons.Closer).Close()
	if got := run(t, b, cfg, time.Now()); got != "[]" {
		t.Fatalf("first run: %s", got)
	}
	steps := g.List("steps")
	for i, ev := range g.List("events") {
		doOps(t, base, steps[i].([]any))
		want := decode(ev).([]any)
		got := collect(t, b, cfg, len(want))
		if g, w := golden.PyJSON(got), golden.PyJSON(want); g != w {
			t.Errorf("step %d %v:\n got %s\nwant %s", i, steps[i], g, w)
		}
	}
}

// TestInotifyCloseAndMasks checks close (a closed beacon starts afresh),
// the default mask and the dict exclude without regex, which keeps a
// directory from being watched but filters no event.
func TestInotifyCloseAndMasks(t *testing.T) {
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "d", "ex", "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := []any{payload.NewMap("files", payload.NewMap(base+"/d", payload.NewMap(
		"recurse", true,
		"exclude", []any{payload.NewMap(base+"/d/ex", &payload.Map{})})))}
	b := builtin.Inotify().New(testEnv(nil))
	c := b.(beacons.Closer)
	defer c.Close()
	run(t, b, cfg, time.Now())
	// Not watched: below the excluded directory.
	if err := os.WriteFile(filepath.Join(base, "d", "ex", "in", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Reported: chmod is not in the default mask, creation is.
	if err := os.Chmod(filepath.Join(base, "d", "ex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "d", "ex2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := golden.PyJSON(collect(t, b, cfg, 1))
	want := golden.PyJSON([]any{payload.NewMap("tag", base+"/d", "path", base+"/d/ex2", "change", "IN_CREATE")})
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// After close, changes until the next setup run are not seen.
	if err := os.WriteFile(filepath.Join(base, "d", "lost"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, b, cfg, time.Now()); got != "[]" {
		t.Errorf("first run after close: %s", got)
	}
	if err := os.Remove(filepath.Join(base, "d", "lost")); err != nil {
		t.Fatal(err)
	}
	got = golden.PyJSON(collect(t, b, cfg, 1))
	want = golden.PyJSON([]any{payload.NewMap("tag", base+"/d", "path", base+"/d/lost", "change", "IN_DELETE")})
	if got != want {
		t.Errorf("after close:\n got %s\nwant %s", got, want)
	}
}

// TestInotifyBadExclude: an exclude pattern that is not a regular
// expression fails the beacon (pyinotify's ExcludeFilter raises).
func TestInotifyBadExclude(t *testing.T) {
	base := t.TempDir()
	cfg := []any{payload.NewMap("files", payload.NewMap(base, payload.NewMap("recurse", true, "exclude", []any{"*.log"})))}
	b := builtin.Inotify().New(testEnv(nil))
	defer b.(beacons.Closer).Close()
	if _, err := b.Beacon(context.Background(), &beacons.Request{Config: cfg}); err == nil {
		t.Fatal("bad exclude accepted")
	}
}
