package proxy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"0/3", Shard{0, 3}, false},
		{" 2/3 ", Shard{2, 3}, false},
		{"0/1", Shard{0, 1}, false},
		{"3/3", Shard{}, true},
		{"-1/3", Shard{}, true},
		{"1/0", Shard{}, true},
		{"1", Shard{}, true},
		{"a/3", Shard{}, true},
		{"1/b", Shard{}, true},
		{"0/5000", Shard{}, true},
	} {
		got, err := ParseShard(tc.in)
		if tc.err {
			if !errors.Is(err, ErrBadShard) {
				t.Errorf("ParseShard(%q) err = %v, want ErrBadShard", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if got.String() != fmt.Sprintf("%d/%d", tc.want.Index, tc.want.Count) {
			t.Errorf("String() = %q", got.String())
		}
	}
}

func TestShardFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want Shard
		err  bool
	}{
		{map[string]string{}, Shard{}, false},
		{map[string]string{"HOSTNAME": "gsalt-proxy-2"}, Shard{}, false},
		{map[string]string{"GSALT_SHARDS": "3", "HOSTNAME": "gsalt-proxy-2"}, Shard{2, 3}, false},
		{map[string]string{"GSALT_SHARDS": "3", "HOSTNAME": "gsalt-proxy-0.gsalt-proxy.ns.svc"}, Shard{0, 3}, false},
		{map[string]string{"GSALT_SHARDS": "4", "GSALT_SHARD": "1", "HOSTNAME": "box"}, Shard{1, 4}, false},
		{map[string]string{"GSALT_SHARDS": "3", "HOSTNAME": "gsalt-proxy-3"}, Shard{}, true},
		{map[string]string{"GSALT_SHARDS": "3", "HOSTNAME": "box"}, Shard{}, true},
		{map[string]string{"GSALT_SHARDS": "3", "HOSTNAME": "box-"}, Shard{}, true},
		{map[string]string{"GSALT_SHARDS": "x", "HOSTNAME": "p-0"}, Shard{}, true},
		{map[string]string{"GSALT_SHARDS": "3", "GSALT_SHARD": "y"}, Shard{}, true},
	} {
		got, err := ShardFromEnv(func(k string) string { return tc.env[k] })
		if tc.err {
			if !errors.Is(err, ErrBadShard) {
				t.Errorf("%v: err = %v, want ErrBadShard", tc.env, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: got %v, %v; want %v", tc.env, got, err, tc.want)
		}
	}
}

func fleetIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw%d", i+1)
	}
	return ids
}

// TestShardRendezvous checks the properties the fleet relies on, over
// 20,000 ids and N from 1 to 12: every id has exactly one shard; shards
// are balanced; going from N to N+1 shards moves only ids to the new shard
// (about 1/(N+1) of them); going back moves exactly those back.
func TestShardRendezvous(t *testing.T) {
	ids := fleetIDs(20000)
	for n := 1; n <= 12; n++ {
		counts := make([]int, n)
		owners := 0
		for _, id := range ids {
			for i := 0; i < n; i++ {
				if (Shard{i, n}).Owns(id) {
					owners++
					counts[i]++
				}
			}
		}
		if owners != len(ids) {
			t.Fatalf("N=%d: %d owners for %d ids", n, owners, len(ids))
		}
		want := len(ids) / n
		for i, c := range counts {
			if c < want*85/100 || c > want*115/100 {
				t.Errorf("N=%d: shard %d has %d ids, want about %d", n, i, c, want)
			}
		}
		moved := 0
		for _, id := range ids {
			before, after := ShardOf(id, n), ShardOf(id, n+1)
			if before != after {
				moved++
				if after != n {
					t.Fatalf("N=%d->%d: %s moved from %d to %d, not to the new shard", n, n+1, id, before, after)
				}
			}
		}
		exp := len(ids) / (n + 1)
		if moved < exp*85/100 || moved > exp*115/100 {
			t.Errorf("N=%d->%d: %d ids moved, want about %d", n, n+1, moved, exp)
		}
	}
	// Select is Owns over the list, order kept, and the shards partition it.
	var all []string
	for i := 0; i < 3; i++ {
		part := Shard{i, 3}.Select(ids)
		var want []string
		for _, id := range ids {
			if ShardOf(id, 3) == i {
				want = append(want, id)
			}
		}
		if !slices.Equal(part, want) {
			t.Errorf("shard %d: Select differs from ShardOf in content or order", i)
		}
		all = append(all, part...)
	}
	slices.Sort(all)
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	if !slices.Equal(all, sorted) {
		t.Errorf("the 3 shards do not partition the ids")
	}
	if got := (Shard{}).Select(ids); len(got) != len(ids) {
		t.Errorf("zero Shard kept %d of %d", len(got), len(ids))
	}
}

// TestShardStable pins the hash: a new gsalt version must send every
// device to the shard it had, or an upgrade would move devices around.
func TestShardStable(t *testing.T) {
	got := map[string]int{}
	for _, id := range []string{"sw1", "sw2", "sw3", "sw4", "sw5", "core-rtr-01.dc1", "edge7"} {
		got[id] = ShardOf(id, 4)
	}
	want := map[string]int{"core-rtr-01.dc1": 1, "edge7": 1, "sw1": 3, "sw2": 3, "sw3": 1, "sw4": 2, "sw5": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ShardOf(id, 4) = %v, want %v", got, want)
	}
}

func TestReadDeviceList(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		err      error
	}{
		{"lines", "# fleet\nsw1\n\n  sw2  \nsw3\n", []string{"sw1", "sw2", "sw3"}, nil},
		{"yaml", "# fleet\n- sw1\n- sw2\n- 'sw 3'\n", []string{"sw1", "sw2", "sw 3"}, nil},
		{"yaml flow", "[sw1, sw2]\n", []string{"sw1", "sw2"}, nil},
		{"yaml doc", "---\n- a\n- 7\n", []string{"a", "7"}, nil},
		{"empty", "\n# nothing\n", nil, nil},
		{"duplicate", "sw1\nsw1\n", nil, ErrBadDeviceList},
		{"yaml duplicate", "- a\n- a\n", nil, ErrBadDeviceList},
		{"yaml map item", "- a\n- {b: 1}\n", nil, ErrBadDeviceList},
		{"yaml broken", "- a\n- [b\n", nil, ErrBadDeviceList},
		{"path", "sw1\n../etc\n", nil, ErrBadID},
		{"yaml path", "- a/b\n", nil, ErrBadID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadDeviceList([]byte(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestLoadDeviceListDir(t *testing.T) {
	dir := t.TempDir()
	// A ConfigMap mounted as a directory: one key per device plus the
	// ..data link and a ..<timestamp> directory.
	for _, n := range []string{"sw2", "sw1", "..data", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "..2026_11_27"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "rtr1"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := LoadDeviceList(dir)
	if err != nil || !slices.Equal(got, []string{"rtr1", "sw1", "sw2"}) {
		t.Fatalf("got %q, %v", got, err)
	}
	file := filepath.Join(t.TempDir(), "devices.yaml")
	if err := os.WriteFile(file, []byte("- a\n- b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadDeviceList(file); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("file: got %q, %v", got, err)
	}
	if _, err := LoadDeviceList(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: err = %v", err)
	}
}

func TestSeedKeys(t *testing.T) {
	seed, pki := t.TempDir(), t.TempDir()
	for _, id := range []string{"sw1", "sw2"} {
		if _, err := crypt.WriteKeyPair(seed, id, 1024); err != nil {
			t.Fatal(err)
		}
	}
	// sw2 already has its own pair in the pki dir: it is kept.
	if err := os.MkdirAll(filepath.Join(pki, "sw2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := crypt.WriteKeyPair(filepath.Join(pki, "sw2"), "minion", 1024); err != nil {
		t.Fatal(err)
	}
	own, _ := os.ReadFile(filepath.Join(pki, "sw2", "minion.pem"))
	n, err := SeedKeys(seed, pki, []string{"sw1", "sw2", "sw3"})
	if err != nil || n != 1 {
		t.Fatalf("SeedKeys = %d, %v; want 1", n, err)
	}
	for _, f := range []string{"pem", "pub"} {
		a, _ := os.ReadFile(filepath.Join(seed, "sw1."+f))
		b, err := os.ReadFile(filepath.Join(pki, "sw1", "minion."+f))
		if err != nil || string(a) != string(b) {
			t.Errorf("sw1 minion.%s not the seeded one (%v)", f, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(pki, "sw2", "minion.pem")); string(got) != string(own) {
		t.Errorf("sw2's own key was replaced")
	}
	if _, err := os.Stat(filepath.Join(pki, "sw3")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sw3 without a seeded key got a directory: %v", err)
	}
	// Twice is a no-op.
	if n, err := SeedKeys(seed, pki, []string{"sw1", "sw2", "sw3"}); err != nil || n != 0 {
		t.Errorf("second SeedKeys = %d, %v", n, err)
	}
	if _, err := SeedKeys(seed, pki, []string{"../x"}); !errors.Is(err, ErrBadID) {
		t.Errorf("bad id: err = %v", err)
	}
}
