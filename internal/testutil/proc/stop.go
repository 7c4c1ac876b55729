package proc

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// Alive reports whether pid is a process that has not ended: it exists
// and is not a zombie (an ended child its parent has not reaped yet).
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z'
}

// statField returns field n (0: state, 1: ppid, 2: process group) of
// /proc/<pid>/stat after the command name (0 when unknown).
func statField(pid, n int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) <= n {
		return 0
	}
	v, _ := strconv.Atoi(string(f[n]))
	return v
}

// livingPids lists the living processes.
func livingPids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if p, err := strconv.Atoi(e.Name()); err == nil && Alive(p) {
			out = append(out, p)
		}
	}
	return out
}

// GroupMembers returns the living processes of process group pgid.
func GroupMembers(pgid int) []int {
	var out []int
	for _, p := range livingPids() {
		if statField(p, 2) == pgid {
			out = append(out, p)
		}
	}
	return out
}

// Descendants returns the living descendants of pid (children, their
// children, ...), read from /proc.
func Descendants(pid int) []int {
	children := map[int][]int{}
	for _, p := range livingPids() {
		if pp := statField(p, 1); pp != 0 {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// Terminate sends SIGTERM to the process alone (not its group: the
// daemon has to take its own children down), as a service manager's stop
// does, and polls until it has exited, failing the test when it is still
// running after timeout (scaled; the process is then killed by the
// test's cleanup). It returns how long the exit took (for messages: tests
// make no timed assertions). Every descendant the process had just
// before the signal, and every member of its process group, must be gone
// too.
func (p *Proc) Terminate(t testing.TB, timeout time.Duration) time.Duration {
	t.Helper()
	kids := Descendants(p.Pid())
	start := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to %s: %v", p.Name, err)
	}
	if !testutil.Poll(timeout, p.Exited) {
		t.Fatalf("%s still runs %v after SIGTERM; its output:\n%s", p.Name, testutil.Scale(timeout), p.Tail(4000))
	}
	took := time.Since(start)
	// What the daemon left gets the same time to go (no assertion on
	// how fast: a child ending by itself a moment later is fine).
	left := func() []int {
		var out []int
		for _, k := range append(kids, GroupMembers(p.Pid())...) {
			if Alive(k) && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	testutil.Poll(timeout, func() bool { return len(left()) == 0 })
	for _, k := range left() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k))
		t.Errorf("%s left process %d behind: %s", p.Name, k, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	return took
}
