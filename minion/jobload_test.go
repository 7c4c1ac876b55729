package minion

import (
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestCloneJobLoad: a job's copy of a shared publish owns every value but
// the target list, which it shares.
func TestCloneJobLoad(t *testing.T) {
	tgt := []any{"sw1", "sw2", "sw3"}
	src := payload.NewMap("fun", "test.ping", "arg", []any{payload.NewMap("k", "v")}, "tgt", tgt, "tgt_type", "list", "jid", "1")
	c := cloneJobLoad(src)
	c.List("arg")[0].(*payload.Map).Set("k", "changed")
	c.Set("jid", "2")
	if v := src.List("arg")[0].(*payload.Map).Str("k"); v != "v" {
		t.Errorf("the shared publish's arg changed to %q", v)
	}
	if src.Str("jid") != "1" {
		t.Errorf("the shared publish's jid changed to %q", src.Str("jid"))
	}
	got := c.List("tgt")
	if len(got) != len(tgt) || &got[0] != &tgt[0] {
		t.Error("the target list was copied")
	}
	if src.Len() != c.Len() {
		t.Errorf("keys %v, want %v", c.Keys(), src.Keys())
	}
}
