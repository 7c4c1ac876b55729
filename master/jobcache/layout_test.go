package jobcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/gsalt/gsalt/internal/testutil"

	"github.com/gsalt/gsalt/wire/payload"
)

const legacyGolden = "testdata/legacy-layout.db"

// legacyStart is the time the jobs of the legacy golden were saved.
var legacyStart = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// writeLegacyLayout writes, with bbolt itself, a job cache in the layout
// gsalt used before a job's load and minions moved to its "meta" child
// bucket: both were keys of the job's bucket, beside start and the
// returns and signed buckets. Job 1 has a load, three minions, two returns
// (m2's signed); job 2 a load and one minion; job 3 is a minion-initiated
// job with a return and no load; the lost bucket holds one entry.
func writeLegacyLayout(path string) error {
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	enc := func(v any) []byte {
		b, err := payload.MarshalBin(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(legacyStart.UnixNano()))
	return db.Update(func(tx *bbolt.Tx) error {
		jobs, err := tx.CreateBucket([]byte("jobs"))
		if err != nil {
			return err
		}
		lost, err := tx.CreateBucket([]byte("lost"))
		if err != nil {
			return err
		}
		if err := lost.Put([]byte("20261128000000000009"), enc(payload.NewMap("reason", "gone", "when", legacyStart.UnixNano(), "jid", "20261128000000000009"))); err != nil {
			return err
		}
		for i, minions := range [][]string{{"m1", "m2", "m3"}, {"m1"}, nil} {
			jid := fmt.Sprintf("2026112900000000000%d", i+1)
			jb, err := jobs.CreateBucket([]byte(jid))
			if err != nil {
				return err
			}
			if err := jb.Put([]byte("start"), ts[:]); err != nil {
				return err
			}
			if minions != nil {
				if err := jb.Put([]byte("load"), enc(payload.NewMap("fun", "test.ping", "tgt", "*", "jid", jid))); err != nil {
					return err
				}
				l := make([]any, len(minions))
				for i, m := range minions {
					l[i] = m
				}
				if err := jb.Put([]byte("minions"), enc(l)); err != nil {
					return err
				}
			}
			var rets []string
			switch i {
			case 0:
				rets = []string{"m1", "m2"}
				sb, err := jb.CreateBucket([]byte("signed"))
				if err != nil {
					return err
				}
				if err := sb.Put([]byte("m2"), []byte{1}); err != nil {
					return err
				}
			case 2:
				rets = []string{"m3"}
			}
			if rets == nil {
				continue
			}
			rb, err := jb.CreateBucket([]byte("returns"))
			if err != nil {
				return err
			}
			for _, id := range rets {
				if err := rb.Put([]byte(id), enc(payload.NewMap("return", "hi from "+id, "retcode", int64(0), "fun", "test.ping"))); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// openLegacy opens a copy of the legacy golden (rewritten first with
// -update).
func openLegacy(t *testing.T, opts Options) *Cache {
	t.Helper()
	if testutil.Update() {
		_ = os.Remove(legacyGolden)
		if err := os.MkdirAll(filepath.Dir(legacyGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeLegacyLayout(legacyGolden); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(legacyGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	path := filepath.Join(t.TempDir(), "jobs.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLegacyLayout: a job cache written before loads and minions moved to
// a job's meta bucket is read as before after the upgrade (List, Get,
// Lost, Prune), and writes to its jobs keep their semantics: duplicate and
// signed returns, AddMinions and SaveLoad merging the minions already
// saved and keeping the start time.
func TestLegacyLayout(t *testing.T) {
	c := openLegacy(t, Options{})
	jobs, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 {
		t.Fatalf("List: %d jobs, want 3", len(jobs))
	}
	for i, j := range jobs {
		if !j.Saved.Equal(legacyStart) {
			t.Errorf("job %s saved %v, want %v", j.JID, j.Saved, legacyStart)
		}
		if i < 2 && (j.Load == nil || j.Load.Str("fun") != "test.ping" || j.Load.Str("jid") != j.JID) {
			t.Errorf("job %s load %v", j.JID, j.Load)
		}
	}
	if got := jobs[0].Minions; !slices.Equal(got, []string{"m1", "m2", "m3"}) {
		t.Errorf("job 1 minions %v", got)
	}
	if jobs[2].Load != nil || jobs[2].Minions != nil {
		t.Errorf("job 3 load %v minions %v, want none", jobs[2].Load, jobs[2].Minions)
	}
	j1 := "20261129000000000001"
	j, err := c.Get(j1)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Returns) != 2 || j.Returns["m2"].Str("return") != "hi from m2" {
		t.Fatalf("job 1 returns %v", j.Returns)
	}
	if lost, err := c.Lost(); err != nil || len(lost) != 1 || lost[0].Reason != "gone" {
		t.Fatalf("Lost() = %v, %v", lost, err)
	}

	// Writes to a legacy job.
	if err := c.SaveReturnSigned(j1, "m2", payload.NewMap("return", "again"), true); !errors.Is(err, ErrDuplicate) {
		t.Errorf("second signed return: %v, want ErrDuplicate", err)
	}
	if err := c.SaveReturn(j1, "m1", payload.NewMap("return", "again")); !errors.Is(err, ErrDuplicate) {
		t.Errorf("second return: %v, want ErrDuplicate", err)
	}
	if err := c.SaveReturnSigned(j1, "m1", payload.NewMap("return", "signed m1"), true); err != nil {
		t.Errorf("signed return over an unsigned one: %v", err)
	}
	if err := c.SaveReturn(j1, "m3", payload.NewMap("return", "m3")); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMinions(j1, []string{"m0", "m4"}); err != nil {
		t.Fatal(err)
	}
	j2 := "20261129000000000002"
	if err := c.SaveLoad(j2, payload.NewMap("fun", "test.echo", "jid", j2), []string{"m2"}); err != nil {
		t.Fatal(err)
	}
	j3 := "20261129000000000003"
	if err := c.SaveLoad(j3, payload.NewMap("fun", "cmd.run", "jid", j3), nil); err != nil {
		t.Fatal(err)
	}
	for jid, want := range map[string]struct {
		fun     string
		minions []string
		returns int
	}{
		j1: {"test.ping", []string{"m0", "m1", "m2", "m3", "m4"}, 3},
		j2: {"test.echo", []string{"m1", "m2"}, 0},
		j3: {"cmd.run", []string{}, 1},
	} {
		j, err := c.Get(jid)
		if err != nil {
			t.Fatal(err)
		}
		if j.Load.Str("fun") != want.fun || !slices.Equal(j.Minions, want.minions) || len(j.Returns) != want.returns || !j.Saved.Equal(legacyStart) {
			t.Errorf("after writes, job %s: fun %q minions %v returns %d saved %v; want %+v", jid, j.Load.Str("fun"), j.Minions, len(j.Returns), j.Saved, want)
		}
	}
	if j, _ := c.Get(j1); j.Returns["m1"].Str("return") != "signed m1" {
		t.Errorf("m1's signed return did not replace the unsigned one: %v", j.Returns["m1"])
	}

	// The writes moved the loads and minions of the legacy jobs to their
	// meta buckets.
	err = c.db.View(func(tx *bbolt.Tx) error {
		for _, jid := range []string{j1, j2, j3} {
			jb := tx.Bucket(bucketJobs).Bucket([]byte(jid))
			if jb.Get(keyLoad) != nil || jb.Get(keyMinions) != nil || jb.Bucket(keyMeta).Get(keyLoad) == nil {
				t.Errorf("job %s: load and minions not moved to its meta bucket", jid)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	c2 := openLegacy(t, Options{Keep: time.Hour, Now: func() time.Time { return legacyStart.Add(2 * time.Hour) }})
	if n, err := c2.Prune(); err != nil || n != 3 {
		t.Fatalf("Prune() = %d, %v; want 3", n, err)
	}
	if jobs, err := c2.List(); err != nil || len(jobs) != 0 {
		t.Fatalf("after Prune: %d jobs, %v", len(jobs), err)
	}
}

// TestReturnCommitLeavesLoadAlone: storing a return does not write the
// job's load and expected minions again. bbolt writes a changed B+tree
// node whole, and a commit that adds a return changes the job bucket's
// node (the returns bucket's root page moves); with the minions (~90 KiB
// for 10,000 minions) in that node, every commit of returns rewrote them.
func TestReturnCommitLeavesLoadAlone(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "jobs.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw-%05d", i)
	}
	jid := "20261129000000000001"
	if err := c.SaveLoad(jid, payload.NewMap("fun", "test.ping", "tgt", "*"), ids); err != nil {
		t.Fatal(err)
	}
	ret := payload.NewMap("return", true, "retcode", int64(0), "fun", "test.ping")
	if err := c.SaveReturn(jid, ids[0], ret); err != nil {
		t.Fatal(err)
	}
	before := c.db.Stats().TxStats
	if err := c.SaveReturn(jid, ids[1], ret); err != nil {
		t.Fatal(err)
	}
	after := c.db.Stats().TxStats
	written := after.GetPageAlloc() - before.GetPageAlloc()
	// The return's commit writes a handful of pages: the returns, job,
	// jobs and root nodes and the freelist.
	if written > 12*4096 {
		t.Fatalf("a return's commit wrote %d bytes (%d pages); the job's minions are written again", written, written/4096)
	}
	t.Logf("a return's commit wrote %d bytes", written)
	if j, err := c.Get(jid); err != nil || len(j.Minions) != len(ids) || len(j.Returns) != 2 {
		t.Fatalf("Get: %v", err)
	}
}

// modelJob is what FuzzJobWrites expects the cache to hold for a job.
type modelJob struct {
	fun     string // the load's fun; "" for no load
	minions map[string]bool
	returns map[string]string
	signed  map[string]bool
}

// FuzzJobWrites applies a sequence of SaveLoad, AddMinions and
// SaveReturnSigned calls, decoded from the input, to a fresh cache or to
// the legacy golden, and checks every job against a model of Salt's
// local_cache semantics (loads replaced, minions merged, a second return
// refused unless it is signed over an unsigned one), before and after a
// reopen.
func FuzzJobWrites(f *testing.F) {
	f.Add(false, []byte{0, 0, 1, 2, 0, 1, 2, 1, 0, 3, 1, 2, 4, 1, 2})
	f.Add(true, []byte{1, 0, 4, 2, 0, 0, 3, 0, 1, 0, 1, 0, 2, 2, 2, 4, 2, 2})
	f.Add(true, []byte{2, 2, 0, 0, 2, 1, 3, 0, 0, 1, 1, 4, 4, 2, 1})
	f.Add(false, []byte{2, 0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 1, 3, 0, 2, 9})
	f.Add(false, []byte{2, 0, 1, 2, 1, 2, 3, 0, 1, 2, 0, 1, 3, 1, 1, 2, 2, 1, 9, 9})
	f.Fuzz(func(t *testing.T, legacy bool, ops []byte) {
		if len(ops) > 3*64 {
			ops = ops[:3*64]
		}
		jids := []string{"20261129000000000001", "20261129000000000002", "20261129000000000003"}
		model := map[string]*modelJob{}
		newJob := func(jid string) *modelJob {
			j := &modelJob{minions: map[string]bool{}, returns: map[string]string{}, signed: map[string]bool{}}
			model[jid] = j
			return j
		}
		var c *Cache
		path := filepath.Join(t.TempDir(), "jobs.db")
		if legacy {
			if err := writeLegacyLayout(path); err != nil {
				t.Fatal(err)
			}
			j := newJob(jids[0])
			j.fun, j.minions = "test.ping", map[string]bool{"m1": true, "m2": true, "m3": true}
			j.returns["m1"], j.returns["m2"], j.signed["m2"] = "hi from m1", "hi from m2", true
			j = newJob(jids[1])
			j.fun, j.minions = "test.ping", map[string]bool{"m1": true}
			j = newJob(jids[2])
			j.returns["m3"] = "hi from m3"
		}
		// The ops' tail (len(ops)%3 bytes, not an op) sets up the index of
		// returns seen: 1, every minion id has the same hash; 2, it
		// forgets half its jobs at each commit (when it has two or more).
		tune := func(c *Cache) {
			switch len(ops) % 3 {
			case 1:
				c.seen.hash = func(maphash.Seed, string) uint64 { return 1 }
			case 2:
				c.seen.max = 0
			}
		}
		c, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tune(c)
		defer func() { c.Close() }()
		for i := 0; i+2 < len(ops); i += 3 {
			jid, m := jids[int(ops[i+1])%len(jids)], fmt.Sprintf("m%d", ops[i+2]%5)
			j := model[jid]
			switch ops[i] % 4 {
			case 0: // SaveLoad
				fun := fmt.Sprintf("f%d", i)
				if err := c.SaveLoad(jid, payload.NewMap("fun", fun), []string{m}); err != nil {
					t.Fatal(err)
				}
				if j == nil {
					j = newJob(jid)
				}
				j.fun, j.minions[m] = fun, true
			case 1: // AddMinions
				err := c.AddMinions(jid, []string{m, "m9"})
				if j == nil {
					if !errors.Is(err, ErrNoJob) {
						t.Fatalf("AddMinions to a missing job: %v", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				j.minions[m], j.minions["m9"] = true, true
			default: // SaveReturnSigned, signed when ops[i]%4 == 3
				signed := ops[i]%4 == 3
				val := fmt.Sprint("r", i)
				err := c.SaveReturnSigned(jid, m, payload.NewMap("return", val), signed)
				if j == nil {
					j = newJob(jid)
				}
				_, had := j.returns[m]
				if had && (!signed || j.signed[m]) {
					if !errors.Is(err, ErrDuplicate) {
						t.Fatalf("op %d: second return of %s: %v, want ErrDuplicate", i, m, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				j.returns[m], j.signed[m] = val, j.signed[m] || signed
			}
		}
		check := func(when string) {
			for _, jid := range jids {
				want := model[jid]
				got, err := c.Get(jid)
				if want == nil {
					if !errors.Is(err, ErrNoJob) {
						t.Fatalf("%s: job %s: %v, want ErrNoJob", when, jid, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				fun := ""
				if got.Load != nil {
					fun = got.Load.Str("fun")
				}
				var minions []string
				for m := range want.minions {
					minions = append(minions, m)
				}
				slices.Sort(minions)
				if fun != want.fun || !slices.Equal(got.Minions, minions) || len(got.Returns) != len(want.returns) {
					t.Fatalf("%s: job %s: fun %q minions %v returns %d; want %q %v %d", when, jid, fun, got.Minions, len(got.Returns), want.fun, minions, len(want.returns))
				}
				for m, v := range want.returns {
					if got.Returns[m].Str("return") != v {
						t.Fatalf("%s: job %s: return of %s %v, want %q", when, jid, m, got.Returns[m], v)
					}
				}
			}
		}
		check("open")
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if c, err = Open(path, Options{}); err != nil {
			t.Fatal(err)
		}
		tune(c)
		check("reopened")
	})
}
