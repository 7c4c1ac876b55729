package minion

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestBeaconsReachMaster configures an inotify beacon in the minion config;
// creating a file in the watched directory sends a _minion_event with
// Salt's beacon tag and data to the master.
func TestBeaconsReachMaster(t *testing.T) {
	dir := t.TempDir()
	fm, _ := acceptedMinion(t, fmt.Sprintf("beacons:\n  inotify:\n    - files:\n        %s:\n          mask: [create]\n    - interval: 1\n", dir))
	// The beacon starts watching on its first loop after connecting.
	var path string
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		path = filepath.Join(dir, fmt.Sprintf("new%d.txt", i))
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		got := fm.waitOptional(2*time.Second, func(l *payload.Map) bool { return l.Str("cmd") == "_minion_event" && len(l.List("events")) > 0 })
		if got != nil {
			ev, _ := got.List("events")[0].(*payload.Map)
			data := ev.Map("data")
			if ev.Str("tag") != "salt/beacon/m1/inotify/"+filepath.Dir(path) && ev.Str("tag") != "salt/beacon/m1/inotify/"+path || data == nil || data.Str("change") != "IN_CREATE" || data.Str("id") != "m1" {
				t.Fatalf("beacon event %s", mustJSON(ev))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no beacon event reached the master")
		}
	}
}

// waitOptional returns the first request matching pred within d, or nil.
func (fm *fakeMaster) waitOptional(d time.Duration, pred func(*payload.Map) bool) *payload.Map {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case l := <-fm.reqCh:
			if pred(l) {
				return l
			}
		case <-timer.C:
			return nil
		}
	}
}
