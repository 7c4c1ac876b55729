package jobcache_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

const pageSize = 4096

// fillCache writes n jobs with one return each (a few KiB per return, so
// they spread over many pages) and closes the file.
func fillCache(t *testing.T, path string, n int) []string {
	t.Helper()
	c, err := jobcache.Open(path, jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var jids []string
	for i := range n {
		jid := c.NewJID()
		load := payload.NewMap("fun", "test.ping", "tgt", "*", "jid", jid)
		if err := c.SaveLoad(jid, load, []string{"m1"}); err != nil {
			t.Fatal(err)
		}
		if err := c.SaveReturn(jid, "m1", payload.NewMap("return", strings.Repeat(fmt.Sprint(i%10), 3000))); err != nil {
			t.Fatal(err)
		}
		jids = append(jids, jid)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return jids
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func overwrite(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func garbage(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}

// TestDamagedFileAtOpen: every kind of damage is ErrDamaged (no panic)
// without Recover, and with Recover the file is moved aside, a fresh one
// opened, readable jobs kept and the others listed as lost.
func TestDamagedFileAtOpen(t *testing.T) {
	cases := []struct {
		name     string
		damage   func(t *testing.T, path string)
		someKept bool
	}{
		{"empty", func(t *testing.T, path string) { os.Truncate(path, 0) }, false},
		{"truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/3)
		}, false},
		{"meta_pages_overwritten", func(t *testing.T, path string) { overwrite(t, path, 0, garbage(2*pageSize)) }, false},
		{"one_page_in_the_middle", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			overwrite(t, path, (fi.Size()/pageSize/2)*pageSize, garbage(pageSize))
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "jobs.db")
			jids := fillCache(t, path, 120)
			tc.damage(t, path)
			before, _ := os.ReadFile(path)

			// Without Recover (on a copy: a panic inside bbolt.Open keeps
			// the file mapped and locked by this process).
			cp := filepath.Join(dir, "copy.db")
			if err := os.WriteFile(cp, before, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := jobcache.Open(cp, jobcache.Options{Logger: quiet()})
			if !errors.Is(err, jobcache.ErrDamaged) {
				t.Fatalf("Open without Recover: %v, want ErrDamaged", err)
			}
			if after, _ := os.ReadFile(cp); string(after) != string(before) {
				t.Fatal("Open without Recover changed the file")
			}

			c, err := jobcache.Open(path, jobcache.Options{Recover: true, Logger: quiet()})
			if err != nil {
				t.Fatalf("Open with Recover: %v", err)
			}
			defer c.Close()
			aside, _ := filepath.Glob(path + ".damaged-*")
			if len(aside) != 1 {
				t.Fatalf("damaged file kept as %v", aside)
			}
			if kept, _ := os.ReadFile(aside[0]); string(kept) != string(before) {
				t.Fatal("the file moved aside is not the damaged file")
			}
			lost, err := c.Lost()
			if err != nil || len(lost) == 0 {
				t.Fatalf("Lost() = %v, %v; want the lost jobs", lost, err)
			}
			for _, l := range lost {
				if !strings.Contains(l.Reason, aside[0]) {
					t.Errorf("lost %q: reason %q does not name the kept file", l.JID, l.Reason)
				}
			}
			jobs, err := c.List()
			if err != nil {
				t.Fatal(err)
			}
			if tc.someKept && len(jobs) == 0 {
				t.Fatal("no job salvaged from a file with one bad page")
			}
			// Every jid is either back or named as lost (or covered by a
			// "jobs after X" entry when the walk itself stopped).
			back := map[string]bool{}
			for _, j := range jobs {
				back[j.JID] = true
			}
			named := map[string]bool{}
			after := ""
			for _, l := range lost {
				named[l.JID] = true
				if l.JID == "" {
					after = "x"
				}
			}
			for _, jid := range jids {
				if !back[jid] && !named[jid] && after == "" {
					t.Errorf("job %s neither kept nor reported lost", jid)
				}
			}
			// The fresh cache works.
			jid := c.NewJID()
			if err := c.SaveReturn(jid, "m1", payload.NewMap("return", true)); err != nil {
				t.Fatal(err)
			}
			// Lost jobs survive a restart.
			c.Close()
			c2, err := jobcache.Open(path, jobcache.Options{Recover: true, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			lost2, _ := c2.Lost()
			if len(lost2) != len(lost) {
				t.Fatalf("lost after restart %d, before %d", len(lost2), len(lost))
			}
		})
	}
}

// TestDamageWhileOpen: a page damaged under a running cache (the file is
// mmapped) makes List, Get and Prune return errors, never panic, and the
// damaged jobs are reported by Lost.
func TestDamageWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	jids := fillCache(t, path, 120)
	now := time.Now().Add(time.Hour)
	c, err := jobcache.Open(path, jobcache.Options{Logger: quiet(), Keep: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fi, _ := os.Stat(path)
	for p := int64(3); p < fi.Size()/pageSize; p += 5 {
		overwrite(t, path, p*pageSize, garbage(pageSize))
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("a panic reached the caller: %v", r)
			}
		}()
		_, _ = c.List()
		for _, jid := range jids {
			_, _ = c.Get(jid)
		}
		_, _ = c.Prune()
		_ = c.SaveReturn(c.NewJID(), "m2", payload.NewMap("return", 1))
	}()
	lost, _ := c.Lost()
	if len(lost) == 0 {
		t.Fatal("damaged jobs are not reported by Lost")
	}
}
