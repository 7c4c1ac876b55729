package runners_test

import (
	"strings"
	"testing"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestRunnerBinding(t *testing.T) {
	reg := runners.Default()
	rn, _ := reg.Lookup("manage.status")
	if _, _, err := rn.Bind([]any{true, "*", "glob", 1, 2, 3}, nil); err == nil ||
		!strings.Contains(err.Error(), "status() takes from 0 to 5 positional arguments but 6 were given") {
		t.Fatalf("too many: %v", err)
	}
	if _, _, err := rn.Bind(nil, payload.NewMap("bogus", 1)); err == nil || !strings.Contains(err.Error(), "status() got an unexpected keyword argument 'bogus'") {
		t.Fatalf("unexpected kw: %v", err)
	}
	if _, _, err := rn.Bind([]any{false}, payload.NewMap("output", true)); err == nil || !strings.Contains(err.Error(), "multiple values for argument 'output'") {
		t.Fatalf("dup: %v", err)
	}
	b, _, err := rn.Bind([]any{false, payload.NewMap("__kwarg__", true, "tgt", "web*")}, payload.NewMap("__user__", "x"))
	if err != nil || b["output"] != false || b["tgt"] != "web*" || b["tgt_type"] != "glob" {
		t.Fatalf("bind %v %v", b, err)
	}
	if got := runners.JIDToTime("20261122030247987634"); got != "2026, Nov 22 03:02:47.987634" {
		t.Fatalf("JIDToTime %q", got)
	}
	if got := runners.JIDToTime("req"); got != "" {
		t.Fatalf("JIDToTime(req) %q", got)
	}
}
