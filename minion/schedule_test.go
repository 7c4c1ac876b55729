package minion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestScheduledJobs runs jobs from the minion config and from the pillar
// on the minion's scheduler and checks what reaches the master: a return
// with jid "req" naming the schedule entry, the function's args and
// kwargs applied; no return for return_job False; _schedule.conf written
// by a schedule change that persists.
func TestScheduledJobs(t *testing.T) {
	fm, m := acceptedMinion(t, `loop_interval: 0.2
schedule:
  echo:
    function: test.arg
    args: [one]
    kwargs: {two: 2}
    seconds: 1
  quiet:
    function: test.echo
    args: [hush]
    seconds: 1
    return_job: False
`)
	ret := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_return" && l.Str("schedule") == "echo" })
	if ret.Str("jid") != "req" || ret.Str("fun") != "test.arg" || ret.Str("id") != "m1" || !ret.Bool("success") {
		t.Errorf("scheduled return %s", mustJSON(ret))
	}
	r := ret.Map("return")
	if args := r.List("args"); len(args) != 1 || args[0] != "one" {
		t.Errorf("args %s", mustJSON(ret))
	}
	if n, _ := r.Map("kwargs").Int("two"); n != 2 || r.Map("kwargs").Str("__pub_schedule") != "echo" {
		t.Errorf("kwargs %s", mustJSON(ret))
	}
	fm.noReq(t, 2*time.Second, func(l *payload.Map) bool { return l.Str("cmd") == "_return" && l.Str("schedule") == "quiet" })

	// Changes through the service, as schedule.add does.
	res, err := m.schedule.ManageSchedule(m.backgroundCtx(), payload.NewMap("func", "add", "persist", true, "schedule",
		payload.NewMap("late", payload.NewMap("function", "test.echo", "args", []any{"late"}, "seconds", int64(1)))))
	if err != nil || !res.Bool("complete") {
		t.Fatalf("add: %v %v", res, err)
	}
	ret = fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_return" && l.Str("schedule") == "late" })
	if ret.Str("return") != "late" {
		t.Errorf("added job return %s", mustJSON(ret))
	}
	conf := filepath.Join(filepath.Dir(m.cfg.Opts.Str("conf_file")), "minion.d", "_schedule.conf")
	b, err := os.ReadFile(conf)
	if err != nil || !strings.Contains(string(b), "  late:\n") || !strings.Contains(string(b), "  echo:\n") {
		t.Errorf("_schedule.conf %q %v", b, err)
	}
}
