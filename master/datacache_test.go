package master

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestDataCacheLoadsInBackground: a cache read from disk in the
// background answers, once asked, with every minion stored before; and a
// minion's data stored while the read may still run is not overwritten
// by the older copy on disk.
func TestDataCacheLoadsInBackground(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "minions")
	const n = 300
	first := newDataCache(dir, slog.Default())
	var want []string
	for i := range n {
		id := fmt.Sprintf("m%03d", i)
		want = append(want, id)
		if err := first.store(id, payload.NewMap("id", id, "os", "Debian"), payload.NewMap("role", "web")); err != nil {
			t.Fatal(err)
		}
	}
	c := newDataCache(dir, slog.Default())
	// Stored at once, while the read from disk may still be going on.
	if err := c.store("m007", payload.NewMap("id", "m007", "os", "Alpine"), payload.NewMap()); err != nil {
		t.Fatal(err)
	}
	got := c.ids()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("ids: %d of %d", len(got), len(want))
	}
	for _, id := range want {
		g, p, ok := c.targetCache(id)
		wantOS := "Debian"
		if id == "m007" {
			wantOS = "Alpine"
		}
		if !ok || g.(*payload.Map).Str("os") != wantOS {
			t.Fatalf("%s: grains %v (ok %v), want os %s", id, g, ok, wantOS)
		}
		if pm, _ := p.(*payload.Map); id != "m007" && (pm == nil || pm.Str("role") != "web") {
			t.Fatalf("%s: pillar %v", id, p)
		}
	}
}
