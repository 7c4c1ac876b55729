// Package natstest runs a real nats-server (Debian's nats-server package)
// for tests: bound to 127.0.0.1 on a free port, with an optional
// JetStream store and extra configuration, stoppable and restartable on
// the same port, and stopped when the test ends. Tests skip with one line
// when the binary is not installed.
package natstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// Binary returns the path of nats-server ($GSALT_NATS_SERVER, PATH, then
// /usr/sbin and /usr/bin), or "" when there is none.
func Binary() string {
	if p := os.Getenv("GSALT_NATS_SERVER"); p != "" {
		return p
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nats-server", "/usr/bin/nats-server"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// Require returns the nats-server binary or skips the test with one line.
func Require(t testing.TB) string {
	t.Helper()
	b := Binary()
	if b == "" {
		t.Skip("nats-server not installed (apt-get install nats-server): NATS tests skipped")
	}
	return b
}

// Options configure a Server.
type Options struct {
	// JetStream enables JetStream with its store in a temporary directory
	// that survives restarts.
	JetStream bool
	// Extra is appended to the generated configuration file (TLS,
	// authorization blocks, ...).
	Extra string
}

// Server is one nats-server process.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	opts Options
	p    *proc.Proc
}

// Start runs nats-server on a free 127.0.0.1 port and waits until it
// accepts connections; it is stopped when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{t: t, bin: Require(t), dir: t.TempDir(), opts: o}
	s.port = proc.FreePort(t)
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Port is the client port.
func (s *Server) Port() int { return s.port }

// URL is the client URL (nats://127.0.0.1:PORT).
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Dir is the server's working directory (configuration, log, store).
func (s *Server) Dir() string { return s.dir }

// Restart starts the server again after Stop (same port, same store).
func (s *Server) Restart() {
	s.t.Helper()
	if s.p != nil {
		s.t.Fatal("natstest: Restart while running")
	}
	conf := fmt.Sprintf("listen: \"127.0.0.1:%d\"\n", s.port)
	if s.opts.JetStream {
		conf += fmt.Sprintf("jetstream {\n  store_dir: %q\n  max_memory_store: 64MB\n  max_file_store: 256MB\n}\n", filepath.Join(s.dir, "js"))
	}
	conf += s.opts.Extra + "\n"
	path := filepath.Join(s.dir, "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.p = proc.Start(s.t, "nats-server", exec.Command(s.bin, "-c", path), proc.Options{Log: filepath.Join(s.dir, "nats.log"), Tail: 8000})
	s.p.WaitPort(s.t, 20*time.Second, fmt.Sprintf("127.0.0.1:%d", s.port))
}

// Stop ends the server (SIGTERM, then SIGKILL after 10 s) and waits for
// it. It is idempotent.
func (s *Server) Stop() {
	if s.p == nil {
		return
	}
	s.p.Stop()
	s.p = nil
}

// Log returns the server's log so far (for failure messages).
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "nats.log"))
	out := string(b)
	if len(out) > 8000 {
		out = "..." + out[len(out)-8000:]
	}
	return strings.TrimSpace(out)
}
