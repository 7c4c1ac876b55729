package master

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/crypt"
)

// TestKeyCacheSeesOtherProcesses: accepted keys are used from memory, yet
// a key another process deletes, rejects (moves) or replaces stops being
// accepted promptly, and one it puts back is accepted again; changes
// through this process's Store count at once.
func TestKeyCacheSeesOtherProcesses(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	c := e.m.accepted
	path := e.keys.KeyPath(keys.StateAccepted, "m1")
	saved := filepath.Join(t.TempDir(), "m1.pub")
	if err := exec.Command("cp", path, saved).Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.get("m1"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	ck, cached := c.m["m1"]
	watching := c.w != nil && c.w.Valid()
	c.mu.Unlock()
	if !watching || !cached || ck.statEach {
		t.Fatalf("key not served from memory: watching=%v cached=%v statEach=%v", watching, cached, ck.statEach)
	}
	returnsStored := func(jid string) int {
		j, err := e.jobs.Get(jid)
		if err != nil {
			return 0
		}
		return len(j.Returns)
	}
	ret := func() string {
		jid, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"})
		if err != nil {
			t.Fatal(err)
		}
		e.mustAES(tm, returnLoad("m1", jid, true))
		return jid
	}
	if jid := ret(); returnsStored(jid) != 1 {
		t.Fatal("return of an accepted minion not stored")
	}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	gone := func(what string) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, func() bool {
			_, err := c.get("m1")
			return err != nil
		}, what)
		// The master keeps its accepted-key list (and publishes) on disk
		// reads; a return from the dropped minion is ignored.
		jid := "20991231235959000001"
		e.mustAES(tm, returnLoad("m1", jid, true))
		if returnsStored(jid) != 0 {
			t.Fatalf("%s: a return was stored", what)
		}
	}
	back := func(what string) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, func() bool {
			_, err := c.get("m1")
			return err == nil
		}, what)
	}
	// Another process deletes the key (gsalt-key -d).
	run("rm", "-f", path)
	gone("key deleted by another process")
	run("cp", saved, path)
	back("key restored by another process")
	// Another process rejects it (moves it to minions_rejected).
	rejected := e.keys.KeyPath(keys.StateRejected, "m1")
	run("mv", path, rejected)
	gone("key rejected by another process")
	run("mv", rejected, path)
	back("key accepted again by another process")
	// Another process replaces it with a different key: the new one is used.
	other, err := os.ReadFile(filepath.Join(vectorsDir, "pki", "proxy1", "minion.pub"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "new.pub")
	if err := os.WriteFile(tmp, other, 0o644); err != nil {
		t.Fatal(err)
	}
	run("cp", tmp, path)
	want, err := crypt.ParsePublicKeyPEM(other)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		pub, err := c.get("m1")
		return err == nil && pub.N.Cmp(want.N) == 0
	}, "replaced key used")
	// Through this process's Store the change counts at once, no polling.
	run("cp", saved, path)
	back("original key back")
	if _, err := e.keys.Delete("m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.get("m1"); err == nil {
		t.Fatal("key deleted through the Store still accepted")
	}
}

// TestAcceptedListingFollowsChanges: the accepted ids used for targeting
// come from memory but follow keys added or removed by another process.
func TestAcceptedListingFollowsChanges(t *testing.T) {
	e := newEnv(t, "")
	e.login("minion1", "m1")
	c := e.m.accepted
	ids, err := c.listing()
	if err != nil || len(ids) != 1 || ids[0] != "m1" {
		t.Fatalf("listing %v %v", ids, err)
	}
	ids[0] = "changed by the caller"
	if again, _ := c.listing(); again[0] != "m1" {
		t.Fatal("the cached listing shares its slice with callers")
	}
	path := e.keys.KeyPath(keys.StateAccepted, "m2")
	if out, err := exec.Command("cp", e.keys.KeyPath(keys.StateAccepted, "m1"), path).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		ids, _ := c.listing()
		return len(ids) == 2
	}, "a key added by another process listed")
	if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m2", Fun: "test.ping"}); err != nil {
		t.Fatalf("publish to the new minion: %v", err)
	}
	if out, err := exec.Command("rm", path).CombinedOutput(); err != nil {
		t.Fatalf("rm: %v %s", err, out)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		ids, _ := c.listing()
		return len(ids) == 1
	}, "a key removed by another process unlisted")
	if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m2", Fun: "test.ping"}); err == nil {
		t.Fatal("publish to a removed minion matched")
	}
}

// TestValidIDCachePurge: after each change of the pki_dir below, purge
// leaves the cache answering as keys.ValidID does for every id, while
// ids whose answer cannot have changed stay remembered (no resolution).
func TestValidIDCachePurge(t *testing.T) {
	base := t.TempDir()
	pki := filepath.Join(base, "pki")
	other := filepath.Join(base, "other")
	for _, d := range []string{pki, other, filepath.Join(base, "pki2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// pki_dir is reached through a link, so the test can move it.
	link := filepath.Join(base, "pkilink")
	if err := os.Symlink(pki, link); err != nil {
		t.Fatal(err)
	}
	ids := []string{"a", "b", "c", "minions"}
	steps := []struct {
		name   string
		change func() error
		kept   []string // still remembered after purge
	}{
		{"nothing changed", func() error { return nil }, ids},
		{"pki_dir/b becomes a link out of pki_dir", func() error { return os.Symlink(other, filepath.Join(pki, "b")) }, []string{"a", "c", "minions"}},
		{"pki_dir/c is a plain file", func() error { return os.WriteFile(filepath.Join(pki, "c"), nil, 0o644) }, []string{"a", "c", "minions"}},
		{"the link now points at another pki_dir", func() error {
			if err := os.Remove(link); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(base, "pki2"), link)
		}, nil},
	}
	v := newValidIDCache(link)
	for _, s := range steps {
		for _, id := range ids {
			v.valid(id)
		}
		if err := s.change(); err != nil {
			t.Fatal(err)
		}
		v.purge()
		var kept []string
		for _, id := range ids {
			if _, ok := v.ok[id]; ok {
				kept = append(kept, id)
			}
		}
		if !slices.Equal(kept, s.kept) {
			t.Errorf("%s: remembered %v, want %v", s.name, kept, s.kept)
		}
		for _, id := range ids {
			if got, want := v.valid(id), keys.ValidID(link, id); got != want {
				t.Errorf("%s: valid(%q) = %v, keys.ValidID says %v", s.name, id, got, want)
			}
		}
	}
}
