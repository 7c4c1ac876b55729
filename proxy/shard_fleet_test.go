package proxy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestShardDeltaproxyPillarList: the device list as a pillar key. Two
// processes' worth of fleets (shard 0/2 and 1/2) each run a deltaproxy
// control proxy named after its shard (like a StatefulSet pod) whose
// pillar's proxy:ids lists every device; each fleet serves exactly the
// sub-proxies its shard owns, and together they serve every device once.
func TestShardDeltaproxyPillarList(t *testing.T) {
	var all []any
	var ids []string
	for i := 1; i <= 12; i++ {
		all = append(all, fmt.Sprintf("dev%d", i))
		ids = append(ids, fmt.Sprintf("dev%d", i))
	}
	dir := shortDir(t)
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		if req.ID == "fleet-0" || req.ID == "fleet-1" {
			return payload.NewMap("proxy", payload.NewMap("proxytype", "deltaproxy", "ids", all)), nil
		}
		return payload.NewMap("proxy", payload.NewMap("proxytype", "dummy")), nil
	}
	d := testMaster(t, dir, pillar)
	boot := started.Watch(t, d.Bus())
	etc := proxyConf(t, dir, d, "")
	for _, ctl := range []string{"fleet-0", "fleet-1"} {
		writeFile(t, filepath.Join(etc, "proxy.d", ctl, "meta.conf"), "metaproxy: deltaproxy\n")
	}
	served := map[string]int{}
	for i, ctl := range []string{"fleet-0", "fleet-1"} {
		sh := proxy.Shard{Index: i, Count: 2}
		ctx, cancel := context.WithCancel(context.Background())
		f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: []string{ctl}, Logger: testLogger(), Shard: sh})
		want := sh.Select(ids)
		waitFor(t, ctl+" sub-proxies", func() bool { return len(f.Devices()) == len(want)+1 })
		var got []string
		for _, dev := range f.Devices() {
			waitServing(t, boot, dev)
			if dev.ID() != ctl {
				got = append(got, dev.ID())
				served[dev.ID()]++
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s serves %v, want %v", ctl, got, want)
		}
	}
	if len(served) != len(ids) {
		t.Fatalf("%d of %d devices served", len(served), len(ids))
	}
	ping := runJob(t, d, "dev*", "glob", "test.ping")
	for _, id := range ids {
		if ping[id] != true {
			t.Errorf("%s: test.ping %v", id, ping[id])
		}
	}
}
