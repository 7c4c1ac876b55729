package pidfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLockHeldAndReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "d.pid")
	p, err := Lock(path, "gsalt-master")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("pidfile holds %q", b)
	}
	// flock locks are per open file description: a second Lock in the same
	// process conflicts like one in another process.
	_, err = Lock(path, "gsalt-master")
	var re *RunningError
	if !errors.As(err, &re) || !errors.Is(err, ErrRunning) || re.PID != os.Getpid() {
		t.Fatalf("second Lock: %v", err)
	}
	if !strings.Contains(err.Error(), "another gsalt-master is running (pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("message: %v", err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Fatalf("the failed Lock changed the file: %q", b2)
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("pidfile left after Release: %v", err)
	}
}

func TestStalePidfileIsTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.pid")
	// A pid of a process that has exited, unlocked: what kill -9 leaves.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1)")
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Lock(path, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("pidfile holds %q", b)
	}
}
