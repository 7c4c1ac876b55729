package masterd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestBeaconStatesFireOnMasterBus: an in-process gsalt minion applies an
// SLS from the gsalt master with beacon.present (an inotify beacon on a
// folder) and a file.managed with the beacon state argument (Salt's
// mod_beacon: an inotify beacon on the file); a file created in the
// folder and a change to the managed file then reach the master's event
// bus as salt/beacon/<id>/inotify/<path> events, and beacon.absent
// removes the first beacon again.
func TestBeaconStatesFireOnMasterBus(t *testing.T) {
	dir := shortDir(t)
	watched, managed := filepath.Join(dir, "watched"), filepath.Join(dir, "managed.conf")
	if err := os.MkdirAll(watched, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "srv", "salt", "beacons.sls"), fmt.Sprintf(`watch_dir:
  beacon.present:
    - beacon_module: inotify
    - files:
        %s:
          mask: [create]
    - interval: 1
%s:
  file.managed:
    - contents: first
    - beacon: True
    - beacon_data:
        interval: 1
        mask: [modify]
`, watched, managed))
	writeFile(t, filepath.Join(dir, "srv", "salt", "gone.sls"), "watch_dir:\n  beacon.absent: []\n")
	d, _ := startMaster(t, dir, "auto_accept: True\n")
	bus := d.Bus().Subscribe(event.All(), 1<<14)
	defer bus.Close()
	startGsaltMinion(t, d, dir, "m1")

	apply := func(sls string) *payload.Map {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(120*time.Second))
		defer cancel()
		res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: "m1", Fun: "state.apply", Arg: []any{sls}},
			testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
		if err != nil || res.Returns["m1"] == nil {
			t.Fatalf("state.apply %s: %v %v", sls, err, res)
		}
		return res.Returns["m1"].Map("return")
	}
	ret := apply("beacons")
	want := map[string]string{
		"beacon_|-watch_dir_|-watch_dir_|-present":                     "Adding watch_dir to beacons",
		"file_|-" + managed + "_|-" + managed + "_|-managed":           "File " + managed + " updated",
		"file_|-beacon_" + managed + "_|-" + managed + "_|-mod_beacon": "Adding beacon_inotify_" + managed + " to beacons",
	}
	for tag, comment := range want {
		r := ret.Map(tag)
		if r == nil || r.Str("comment") != comment || r.Bool("result") != true {
			t.Errorf("%s: %v, want comment %q", tag, r, comment)
		}
	}
	// The beacons start watching on their next loop: touch until an event
	// arrives (the wait is the behaviour under test).
	waitBeacon := func(what, tag string, touch func(i int)) *payload.Map {
		t.Helper()
		deadline := time.Now().Add(testutil.Scale(30 * time.Second))
		for i := 0; time.Now().Before(deadline); i++ {
			touch(i)
			tick := time.After(time.Second)
			for {
				select {
				case ev := <-bus.C():
					if strings.HasPrefix(ev.Tag, tag) {
						return ev.Data
					}
					continue
				case <-tick:
				}
				break
			}
		}
		t.Fatalf("%s: no %s event on the master bus", what, tag)
		return nil
	}
	data := waitBeacon("beacon.present", "salt/beacon/m1/watch_dir/", func(i int) {
		writeFile(t, filepath.Join(watched, fmt.Sprintf("new%d", i)), "x")
	})
	if data.Str("change") != "IN_CREATE" || !strings.HasPrefix(data.Str("path"), watched+"/new") {
		t.Errorf("watch_dir event %v", data.Keys())
	}
	data = waitBeacon("file.managed beacon: True", "salt/beacon/m1/beacon_inotify_"+managed, func(i int) {
		writeFile(t, managed, fmt.Sprintf("changed %d", i))
	})
	if data.Str("change") != "IN_MODIFY" || data.Str("path") != managed {
		t.Errorf("mod_beacon event %v %v", data.Str("change"), data.Str("path"))
	}
	ret = apply("gone")
	if r := ret.Map("beacon_|-watch_dir_|-watch_dir_|-absent"); r == nil || r.Str("comment") != "Removed watch_dir from beacons" {
		t.Errorf("beacon.absent: %v", r)
	}
}
