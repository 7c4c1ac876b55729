package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/wire/crypt"
)

// EnvFleetDevices sets the number of simulated devices of
// TestShardedFleet (default 40; the full run is 3000).
const EnvFleetDevices = "GSALT_FLEET_DEVICES"

// EnvFleetKeys names a folder of key pairs kept between runs,
// DIR/<id>/minion.pem and minion.pub (the proxy benches' key cache,
// which scripts/bench-fleet.sh passes): TestShardedFleet copies the
// devices' pairs from it instead of generating them (3,000 RSA-2048
// pairs took minutes of the full run); ids it lacks are generated.
const EnvFleetKeys = "GSALT_FLEET_KEYS"

// TestShardedFleet runs the fleet as real processes: one gsalt-master,
// gsalt-devsim simulating N IOS-XE switches, and gsalt-proxy --shard I/3
// for I = 0..2 reading one device list (a YAML list), every device on the
// napalm proxytype (pillar). Device keys are pre-generated (gsalt-key
// --gen-keys) into a seed directory that every shard copies from
// (--pki-seed-dir) into its own pki dir, and accepted once by the master's
// autosign_grains. Then: every device answers test.ping exactly once;
// shard 1 stops and starts again and every device answers again; N goes
// from 3 to 4 the way a StatefulSet scales (shard 3 starts, shards 2, 1, 0
// restart with /4): the devices rendezvous hashing moves are exactly those
// shard 3 now serves, they re-register with the same key (no new, pending
// or denied key on the master), and every device answers exactly once.
func TestShardedFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes; skipped with -short")
	}
	n := 40
	if v := os.Getenv(EnvFleetDevices); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 4 {
			t.Fatalf("%s=%q: want a number >= 4", EnvFleetDevices, v)
		}
	}
	dir := t.TempDir()
	bin := fleetlab.Build(t)
	ids := fleetlab.IDs(n)

	// The simulated switches.
	base := fleetlab.FreeRange(t, n)
	fleetlab.Start(t, dir, "devsim", filepath.Join(bin, "gsalt-devsim"),
		[]string{"--devices", strconv.Itoa(n), "--base-port", strconv.Itoa(base)}, nil)

	// Pre-generated keys: sw1 with the gsalt-key binary, the others with
	// the same library call in parallel (it is the slow part).
	seed := filepath.Join(dir, "seed")
	fleetlab.Run(t, filepath.Join(bin, "gsalt-key"), "--gen-keys", "sw1", "--gen-keys-dir", seed)
	genKeys(t, seed, ids[1:])

	// The master: pillar for the napalm devices, autosign by grain.
	fleetlab.NapalmPillar(t, filepath.Join(dir, "srv", "pillar"), base)
	// Under root_dir: like Salt, gsalt prefixes other absolute paths with it.
	autosign := filepath.Join(dir, "master", "autosign")
	if err := os.MkdirAll(autosign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(autosign, "fleet_token"), []byte("tok-4f9c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := fleetlab.StartMaster(t, bin, dir, fmt.Sprintf("pillar_roots: {base: [%s/srv/pillar]}\nautosign_grains_dir: %s", dir, autosign))

	// The shared device list.
	list := filepath.Join(dir, "devices.yaml")
	var b strings.Builder
	b.WriteString("# the fleet\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "- %s\n", id)
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	shards := map[int]*fleetlab.Proc{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("master keys: %d accepted, %d pending, %d denied", len(m.Keys("minions")), len(m.Keys("minions_pre")), len(m.Keys("minions_denied")))
		t.Logf("master log:\n%s", m.Proc.Tail(1500))
		for i, p := range shards {
			t.Logf("shard %d log:\n%s", i, p.Tail(1500))
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("shard%d", i), "log"))
			t.Logf("shard %d log_file:\n%s", i, b[max(0, len(b)-1500):])
		}
	})
	start := func(i, count int) {
		conf := filepath.Join(dir, "etc", fmt.Sprintf("proxy-%d", i))
		state := filepath.Join(dir, fmt.Sprintf("shard%d", i))
		if err := os.MkdirAll(conf, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf(`root_dir: %[1]s
pki_dir: %[1]s/pki
cachedir: %[1]s/cache
sock_dir: %[1]s/sock
log_file: %[1]s/log
log_level_logfile: warning
master: 127.0.0.1
master_port: %d
acceptance_wait_time: 2
autosign_grains: [fleet_token]
grains:
  fleet_token: tok-4f9c
`, state, m.RetPort)
		if err := os.WriteFile(filepath.Join(conf, "proxy"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		shards[i] = fleetlab.Start(t, dir, fmt.Sprintf("proxy-%d", i), filepath.Join(bin, "gsalt-proxy"),
			[]string{"-c", conf, "--proxyids-file", list, "--shard", fmt.Sprintf("%d/%d", i, count),
				"--pki-seed-dir", seed, "-l", "warning"}, nil)
	}
	served := func(i int) []string {
		ents, _ := os.ReadDir(filepath.Join(dir, fmt.Sprintf("shard%d", i), "pki"))
		var out []string
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, e.Name())
			}
		}
		slices.Sort(out)
		return out
	}
	deadline := time.Duration(60+n/5) * time.Second
	if v := os.Getenv("GSALT_FLEET_DEADLINE"); v != "" {
		deadline, _ = time.ParseDuration(v)
	}
	once := func(what string) {
		t.Helper()
		res := m.WaitAllAnswer(t, ids, deadline)
		if twice := res.Twice(); len(twice) > 0 {
			slices.Sort(twice)
			t.Fatalf("%s: %d devices answered more than once: %v", what, len(twice), twice[:min(10, len(twice))])
		}
		if len(res.Returns) != n {
			t.Fatalf("%s: %d devices returned, want %d", what, len(res.Returns), n)
		}
		if acc, pre, den := m.Keys("minions"), m.Keys("minions_pre"), m.Keys("minions_denied"); len(acc) != n || len(pre) != 0 || len(den) != 0 {
			t.Fatalf("%s: master keys: %d accepted, %d pending, %d denied; want %d, 0, 0", what, len(acc), len(pre), len(den), n)
		}
	}

	for i := range 3 {
		start(i, 3)
	}
	once("3 shards")
	for i := range 3 {
		k := shards[i].RSSKiB()
		c := len(proxy.Shard{Index: i, Count: 3}.Select(ids))
		t.Logf("shard %d/3: %d devices, RSS %d MiB (%.0f KiB a device)", i, c, k/1024, float64(k)/float64(max(c, 1)))
	}
	t.Logf("gsalt-master RSS %d MiB", m.Proc.RSSKiB()/1024)
	for i := range 3 {
		want := proxy.Shard{Index: i, Count: 3}.Select(slices.Sorted(slices.Values(ids)))
		if got := served(i); !slices.Equal(got, want) {
			t.Fatalf("shard %d serves %d devices, want %d", i, len(got), len(want))
		}
	}
	for _, id := range ids {
		pub, _ := os.ReadFile(filepath.Join(seed, id+".pub"))
		acc, err := os.ReadFile(filepath.Join(m.PKIDir, "minions", id))
		if err != nil || strings.TrimSpace(string(acc)) != strings.TrimSpace(string(pub)) {
			t.Fatalf("%s: the accepted key is not the seeded one (%v)", id, err)
		}
	}

	shards[1].Stop()
	start(1, 3)
	once("shard 1 restarted")

	// 3 -> 4 shards, in a StatefulSet's order.
	moved := 0
	for _, id := range ids {
		if proxy.ShardOf(id, 4) != proxy.ShardOf(id, 3) {
			moved++
		}
	}
	start(3, 4)
	for _, i := range []int{2, 1, 0} {
		shards[i].Stop()
		start(i, 4)
	}
	once("4 shards")
	var want3 []string
	for _, id := range slices.Sorted(slices.Values(ids)) {
		if proxy.ShardOf(id, 4) == 3 {
			want3 = append(want3, id)
		}
	}
	if got := served(3); !slices.Equal(got, want3) || len(got) != moved {
		t.Fatalf("shard 3 serves %d devices, want the %d moved ones", len(got), moved)
	}
	t.Logf("%d devices, %d moved to the new shard", n, moved)
	for i, p := range shards {
		if done, err := p.Exited(); done {
			t.Fatalf("shard %d exited: %v\n%s", i, err, p.Tail(2000))
		}
	}
}

func genKeys(t *testing.T, dir string, ids []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	sem := make(chan struct{}, 2)
	for _, id := range ids {
		if copyCachedKeys(t, dir, id) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := crypt.WriteKeyPair(dir, id, 2048); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) { proc.Main(m) }

// copyCachedKeys copies id's key pair from the EnvFleetKeys folder into
// dir as <id>.pem and <id>.pub (gsalt-key --gen-keys' layout); false when
// the folder is not set or lacks the pair.
func copyCachedKeys(t *testing.T, dir, id string) bool {
	t.Helper()
	cache := os.Getenv(EnvFleetKeys)
	if cache == "" {
		return false
	}
	pem, err := os.ReadFile(filepath.Join(cache, id, "minion.pem"))
	if err != nil {
		return false
	}
	pub, err := os.ReadFile(filepath.Join(cache, id, "minion.pub"))
	if err != nil {
		return false
	}
	if err := os.WriteFile(filepath.Join(dir, id+".pem"), pem, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}
