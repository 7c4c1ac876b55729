package transport

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// emfileChildEnv makes the test binary run TestAcceptSurvivesEMFILE's
// server: a request server in a process whose descriptor limit is tiny.
const emfileChildEnv = "GSALT_TEST_EMFILE_CHILD"

// TestAcceptSurvivesEMFILE: a request server whose process runs out of
// descriptors (accept fails with EMFILE) backs off instead of spinning,
// keeps its listener, and serves requests again once descriptors are
// free. The server runs in a child process (this test binary) with
// RLIMIT_NOFILE lowered to 48; this process holds 80 connections to it,
// then lets them go and sends a request.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	if os.Getenv(emfileChildEnv) == "1" {
		emfileChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptSurvivesEMFILE$")
	cmd.Env = append(os.Environ(), emfileChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	var (
		mu       sync.Mutex
		failures int
		logText  strings.Builder
	)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logText.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "accept failed") && strings.Contains(sc.Text(), "too many open files") {
				failures++
			}
			mu.Unlock()
		}
	}()
	addrLine, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the child server printed no address: %v", err)
	}
	addr := strings.TrimSpace(addrLine)

	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for range 80 {
		c, err := net.DialTimeout("tcp", addr, testutil.Scale(5*time.Second))
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		held = append(held, c)
	}
	deadline := time.Now().Add(testutil.Scale(20 * time.Second))
	for {
		mu.Lock()
		n := failures
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("the server logged %d EMFILE accept failures, want at least 3; its log:\n%s", n, logText.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range held {
		_ = c.Close()
	}
	held = nil
	mu.Lock()
	spun := failures
	mu.Unlock()
	if spun > 50 {
		t.Errorf("the server logged %d accept failures before the descriptors were freed: it spins instead of backing off", spun)
	}
	c := &ReqClient{Addr: addr, Tries: 1, Timeout: testutil.Scale(20 * time.Second), Logger: testLogger(t)}
	got, err := c.Send(context.Background(), []byte("after"))
	if err != nil || string(got) != "re:after" {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("request after the descriptors were freed: %q, %v; server log:\n%s", got, err, logText.String())
	}
}

// emfileChild serves echo requests with RLIMIT_NOFILE 48 until stdin
// closes; it prints the server's address on stdout and logs to stderr.
func emfileChild() {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		os.Exit(2)
	}
	rl.Cur = 48
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := ListenReq(context.Background(), "127.0.0.1:0", echo, ReqOptions{Workers: 2, Logger: log})
	if err != nil {
		os.Exit(2)
	}
	os.Stdout.WriteString(srv.Addr().String() + "\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
	os.Exit(0)
}
