package minion

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestAppendReplayGuardMatchesMarshalBin: the hand-written guard encoding
// is byte for byte payload.MarshalBin of the same map, across the size
// classes of msgpack strings, arrays and integers.
func TestAppendReplayGuardMatchesMarshalBin(t *testing.T) {
	jids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("2026010100000%07d", i)
		}
		return out
	}
	cases := []struct {
		key    string
		serial int64
		jids   []string
	}{
		{"", 0, nil},
		{sessionKeyHash("k"), 1, jids(1)},
		{sessionKeyHash("k"), 127, jids(15)},
		{sessionKeyHash("k"), 128, jids(16)},
		{strings.Repeat("h", 31), 255, jids(100)},
		{strings.Repeat("h", 256), 256, jids(65535)},
		{strings.Repeat("h", 70000), 65536, jids(65536)},
		{"x", math.MaxUint32 + 1, []string{"", strings.Repeat("j", 300)}},
		{"x", -1, nil},
		{"x", -33, nil},
		{"x", -200, nil},
		{"x", -40000, nil},
		{"x", math.MinInt64, nil},
	}
	for i, c := range cases {
		l := make([]any, len(c.jids))
		for k, j := range c.jids {
			l[k] = j
		}
		want, err := payload.MarshalBin(payload.NewMap("key", c.key, "serial", c.serial, "jids", l))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendReplayGuard(nil, c.key, c.serial, c.jids); !bytes.Equal(got, want) {
			t.Errorf("case %d: encoding differs from MarshalBin", i)
		}
	}
}

// TestReplayGuardFile writes guards of changing lengths through
// writeReplayGuard and reads the file back as loadReplayGuard does: the
// latest guard is the value at its start, also after the file was
// removed (created again), truncated by another process while mapped
// (written again without the mapping, no crash) and reopened.
func TestReplayGuardFile(t *testing.T) {
	jids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("2026112821%06d%06d", i, n)
		}
		return out
	}
	dir := t.TempDir()
	m := &Minion{cacheDir: dir, log: testLogger(t)}
	path := filepath.Join(dir, replayGuardFile)
	check := func(step string, want []byte) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		v, n, err := payload.UnmarshalPrefix(b)
		if err != nil || n != len(want) || !bytes.Equal(b[:n], want) {
			t.Fatalf("%s: file holds %d bytes, value of %d (%v), want the %d-byte guard", step, len(b), n, err, len(want))
		}
		if _, ok := v.(*payload.Map); !ok {
			t.Fatalf("%s: value %T, want a map", step, v)
		}
		for _, c := range b[n:] {
			if c != 0 {
				t.Fatalf("%s: a stale tail follows the guard", step)
			}
		}
	}
	key := strings.Repeat("ab", 32)
	write := func(step string, serial int64, nj int) {
		t.Helper()
		b := appendReplayGuard(nil, key, serial, jids(nj))
		m.replayMu.Lock()
		err := m.writeReplayGuard(b)
		m.replayMu.Unlock()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		check(step, b)
	}
	write("first", 1, 3)
	if m.replay.mem == nil {
		t.Fatal("the guard file is not mapped")
	}
	// A mapped guard holds no descriptor (10,000 proxied devices held
	// one each, half of gsalt-proxy's open files).
	noFD := func(step string) {
		t.Helper()
		if n := openDescriptors(t, path); n != 0 {
			t.Fatalf("%s: %d descriptor(s) open on the mapped guard file", step, n)
		}
	}
	noFD("first")
	write("grown past a page", 2, 300)
	noFD("grown past a page")
	write("shrunk", 3, 1)
	write("grown again", 4, 100)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	m.replay.checked = time.Time{} // the removal check is due
	write("after removal", 5, 2)
	noFD("after removal")

	// Another process truncates the mapped file: the write faults, is
	// redone with pwrite, and later writes keep using pwrite.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	write("after truncation", 6, 4)
	if !m.replay.noMap || m.replay.mem != nil {
		t.Fatalf("after a fault the guard is still mapped (noMap %v)", m.replay.noMap)
	}
	write("unmapped, shrunk", 7, 1)
	m.closeReplayGuard()

	// A restarted minion reads the last guard and maps the file again.
	m2 := &Minion{cacheDir: dir, log: testLogger(t), jidSeen: map[string]bool{}}
	m2.loadReplayGuard()
	if m2.replay.serial != 7 || len(m2.jidQueue) != 1 {
		t.Fatalf("reloaded serial %d, %d jids; want 7 and 1", m2.replay.serial, len(m2.jidQueue))
	}
	m = m2
	write("reopened", 8, 50)
	if m.replay.mem == nil {
		t.Fatal("the reopened guard file is not mapped")
	}
	m.closeReplayGuard()
}

// openDescriptors counts this process's descriptors open on path.
func openDescriptors(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == path {
			n++
		}
	}
	return n
}
