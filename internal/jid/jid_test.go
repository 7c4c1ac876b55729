package jid_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// testdata/golden.json holds what Salt's own salt.utils.jid answers for
// the texts and times in testdata/cases.json (testdata/gen_golden.py, run
// by `go test ./internal/jid -update` with GSALT_SALT_SRC set).

type cases struct {
	Texts []string `json:"texts"`
	Times []string `json:"times"`
}

type golden struct {
	IsJID     []bool            `json:"is_jid"`
	JIDToTime []json.RawMessage `json:"jid_to_time"`
	GenJID    []string          `json:"gen_jid"`
}

func load(t *testing.T) (cases, golden) {
	t.Helper()
	if testutil.Update() {
		src := saltpeer.Require(t)
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(time.Minute))
		defer cancel()
		cmd := saltpeer.PythonCommand(ctx, src, "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
			filepath.Join("testdata", "gen_golden.py"), filepath.Join("testdata", "cases.json"), filepath.Join("testdata", "golden.json"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_golden.py: %v\n%s", err, out)
		}
	}
	var c cases
	var g golden
	for file, v := range map[string]any{"cases.json": &c, "golden.json": &g} {
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if len(g.IsJID) != len(c.Texts) || len(g.GenJID) != len(c.Times) {
		t.Fatal("testdata/golden.json does not match cases.json: run with -update")
	}
	return c, g
}

func TestIsAndToTimeMatchSalt(t *testing.T) {
	c, g := load(t)
	for i, s := range c.Texts {
		if got := saltjid.Is(s); got != g.IsJID[i] {
			t.Errorf("is_jid(%q) = %v, Salt %v", s, got, g.IsJID[i])
		}
		got, err := saltjid.ToTime(s)
		var want string
		if json.Unmarshal(g.JIDToTime[i], &want) != nil {
			var e struct{ Error, Msg string }
			if err := json.Unmarshal(g.JIDToTime[i], &e); err != nil {
				t.Fatal(err)
			}
			if err == nil || !errors.Is(err, saltjid.ErrNotJID) {
				t.Errorf("jid_to_time(%q) = %q, %v; Salt raised %s: %s", s, got, err, e.Error, e.Msg)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("jid_to_time(%q) = %q, %v; Salt %q", s, got, err, want)
		}
	}
}

func TestFormatMatchesGenJID(t *testing.T) {
	c, g := load(t)
	for i, iso := range c.Times {
		tm, err := time.ParseInLocation("2006-01-02T15:04:05.999999", iso, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		got := saltjid.Format(tm)
		if got != g.GenJID[i] {
			t.Errorf("gen_jid at %s = %s, Salt %s", iso, got, g.GenJID[i])
		}
		// A jid is UTC whatever the zone of the time given.
		if z := saltjid.Format(tm.In(time.FixedZone("X", 5*3600+1800))); z != g.GenJID[i] {
			t.Errorf("gen_jid at %s in +05:30 = %s, Salt %s", iso, z, g.GenJID[i])
		}
		back, err := saltjid.Parse(got)
		if err != nil || !back.Equal(tm) {
			t.Errorf("Parse(%s) = %v, %v; want %v", got, back, err, tm)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "req", "2026112203024798763", "２０２６１１２２０３０２４７９８７６３４", "20261322030247987634", "20261122030247987634_"} {
		if _, err := saltjid.Parse(s); !errors.Is(err, saltjid.ErrNotJID) {
			t.Errorf("Parse(%q) error %v, want ErrNotJID", s, err)
		}
	}
	if !saltjid.Is(saltjid.New()) {
		t.Error("New() is not a jid")
	}
}
