package render_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// TestSaltOracleRestarts drives a real saltjinja.py through the cases
// that lost the last -update run: a template that kills the Python
// process once is answered by a fresh process; one that kills it every
// time, or hangs past the deadline, is answered with the class "limit"
// and named; a template past the per-case CPU bound is Salt's own "limit"
// answer; and the process after all that still renders.
func TestSaltOracleRestarts(t *testing.T) {
	src := saltpeer.Require(t)
	t.Setenv("GSALT_JINJA_CPU_S", "2")
	marker := filepath.Join(t.TempDir(), "killed-once")
	var logs []string
	o := &saltOracle{src: src, deadline: 20 * time.Second, logf: func(format string, args ...any) {
		logs = append(logs, fmt.Sprintf(format, args...))
	}}
	t.Cleanup(func() { _ = o.close() })
	shell := func(cmd string) string {
		// cmd.run's shell is a child of saltjinja.py: $PPID is the oracle
		return fmt.Sprintf(`{{ salt['cmd.run']('%s', python_shell=True) }}`, cmd)
	}
	text := func(s string) *string { return &s }
	for _, tc := range []struct {
		id, template string
		want         corpusResult
		killer       bool
	}{
		{id: "plain", template: "{{ 1 + 1 }}", want: corpusResult{Out: text("2")}},
		{id: "kills-once", template: shell("test -e "+marker+" || { touch "+marker+"; kill -9 $PPID; }") + "after", want: corpusResult{Out: text("after")}},
		{id: "kills-always", template: shell("kill -9 $PPID"), want: corpusResult{Class: "limit", Exc: "died"}, killer: true},
		{id: "hangs", template: `{{ salt['test.sleep'](30) }}`, want: corpusResult{Class: "limit", Exc: "died"}, killer: true},
		{id: "cpu-bound", template: "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", want: corpusResult{Class: "limit", Exc: "CaseLimit"}},
		{id: "after", template: "{{ [1, 2]|select|list }}", want: corpusResult{Out: text("[1, 2]")}},
	} {
		if tc.id == "hangs" {
			o.deadline = 5 * time.Second
		} else {
			o.deadline = 120 * time.Second
		}
		got, err := o.render(corpusCase{ID: tc.id, Category: "oracle", Template: tc.template})
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		same := got.Class == tc.want.Class && got.Exc == tc.want.Exc
		if tc.want.Out != nil {
			same = got.Out != nil && *got.Out == *tc.want.Out
		}
		if !same {
			t.Errorf("%s: got %s (exc %q), want %s (exc %q)", tc.id, got, got.Exc, tc.want, tc.want.Exc)
		}
		if killed := slices.Contains(o.killers, tc.id); killed != tc.killer {
			t.Errorf("%s: named as a killer: %v, want %v (killers %v)", tc.id, killed, tc.killer, o.killers)
		}
	}
	// one restart for kills-once, two each for kills-always and hangs
	restarts := 0
	for _, l := range logs {
		if strings.Contains(l, "restarting it") {
			restarts++
		}
	}
	if restarts != 5 {
		t.Errorf("%d restarts logged, want 5:\n%s", restarts, strings.Join(logs, "\n"))
	}
}
