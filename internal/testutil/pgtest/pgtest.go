// Package pgtest starts a throwaway PostgreSQL cluster for tests of the
// postgres execution and state modules: initdb into a temporary folder and
// a postgres server run as the postgres system user, listening on
// 127.0.0.1 at a free port and on a unix socket in that folder, stopped
// and removed when the test ends. Test code only.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/wire/payload"
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	// Dir holds data/ and sock/; Sock is the unix socket folder (the
	// --host value for local connections), Port the TCP port on 127.0.0.1.
	Dir, Data, Sock string
	Port            int
	// Bin is the folder of initdb, postgres and psql.
	Bin  string
	cred *syscall.Credential
}

// binDir finds the folder of the server binaries.
func binDir() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Strings(matches)
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1])
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// Start initialises and starts a cluster whose superuser is "postgres",
// local (socket) connections trusted and TCP connections checked with
// md5/SCRAM passwords. It skips the test (one line) when PostgreSQL, psql,
// the postgres system user or root are missing.
func Start(t *testing.T) *Cluster {
	t.Helper()
	c := Prepare(t)
	c.start(t)
	return c
}

// Prepare checks what Start needs and creates the cluster's folders (the
// top one open to all, data/ and sock/ owned by postgres) without
// initialising or starting anything.
func Prepare(t *testing.T) *Cluster {
	t.Helper()
	bin := binDir()
	if bin == "" {
		t.Skip("postgres: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin); skipping")
	}
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("postgres: no psql on PATH; skipping")
	}
	if os.Geteuid() != 0 {
		t.Skip("postgres: the tests run psql as the postgres user and need root; skipping")
	}
	pw, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("postgres: no postgres system user; skipping")
	}
	uid, _ := strconv.Atoi(pw.Uid)
	gid, _ := strconv.Atoi(pw.Gid)
	dir, err := os.MkdirTemp("", "gsalt-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	c := &Cluster{Dir: dir, Data: filepath.Join(dir, "data"), Sock: filepath.Join(dir, "sock"), Bin: bin,
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{c.Data, c.Sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(c.Sock, 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// start runs initdb and the server and waits until it answers.
func (c *Cluster) start(t *testing.T) {
	t.Helper()
	bin, dir := c.Bin, c.Dir
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(2*time.Minute))
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", c.Data, "-U", "postgres", "-E", "UTF8", "--locale=C",
		"--auth-local=trust", "--auth-host=md5", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	initdb.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.Port = proc.FreePort(t)
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", c.Data, "-k", c.Sock, "-p", strconv.Itoa(c.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "shared_buffers=16MB", "-c", "max_connections=20")
	srv.Dir = dir
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	srv.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	p := proc.Start(t, "postgres", srv, proc.Options{Grace: 20 * time.Second})
	deadline := time.Now().Add(testutil.Scale(60 * time.Second))
	for {
		if _, err := c.PSQL("postgres", "SELECT 1"); err == nil {
			break
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("postgres did not start:\n%s", p.Tail(3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PSQL runs one query as the postgres superuser over the socket and
// returns its unaligned, tuples-only output.
func (c *Cluster) PSQL(db, query string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(30*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", "--no-psqlrc", "-X", "-A", "-t", "-h", c.Sock, "-p", strconv.Itoa(c.Port), "-U", "postgres", "-d", db, "-c", query)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.Dir = c.Dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("psql %q: %w: %s", query, err, out)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// MustPSQL is PSQL failing the test on error.
func (c *Cluster) MustPSQL(t *testing.T, db, query string) string {
	t.Helper()
	out, err := c.PSQL(db, query)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ChownPostgres gives path to the postgres system user (a tablespace
// folder, say).
func (c *Cluster) ChownPostgres(t *testing.T, path string) {
	t.Helper()
	if err := os.Chown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

var (
	pgDirRe     = regexp.MustCompile(`/tmp/gsalt-pg-[A-Za-z0-9]+`)
	pgSockRe    = regexp.MustCompile(`\.s\.PGSQL\.\d+`)
	pgPortRe    = regexp.MustCompile(`port \d+`)
	pgVersionRe = regexp.MustCompile(`^\d+\.\d+ \(.*\)$`)
	pgRFC3339Re = regexp.MustCompile(`^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)Z$`)
	pgPidRe     = regexp.MustCompile(`'pid': \d+`)
	pgDateRe    = regexp.MustCompile(`^datetime\.datetime\((\d+), (\d+), (\d+), (\d+), (\d+)(?:, (\d+))?\)$`)
)

// Normalize rewrites what differs between two runs on two
// throwaway clusters: the cluster folder, the port, pids, object ids, the
// server version, and Python's datetime repr (gsalt returns the
// timestamp text str() of it gives). name is the golden step: the
// version is normalised only in a step named "version".
func Normalize(name string, v any) any {
	switch x := v.(type) {
	case string:
		x = pgDirRe.ReplaceAllString(x, "{pgdir}")
		x = pgSockRe.ReplaceAllString(x, ".s.PGSQL.{port}")
		x = pgPortRe.ReplaceAllString(x, "port {port}")
		x = pgPidRe.ReplaceAllString(x, "'pid': 0")
		if m := pgDateRe.FindStringSubmatch(x); m != nil {
			n := make([]int, 6)
			for i := range n {
				n[i], _ = strconv.Atoi(m[i+1])
			}
			x = fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", n[0], n[1], n[2], n[3], n[4], n[5])
		}
		if m := pgRFC3339Re.FindStringSubmatch(x); m != nil {
			x = m[1] + " " + m[2]
		}
		if name == "version" {
			x = pgVersionRe.ReplaceAllString(x, "{version}")
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(name, e)
		}
		return out
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			val := Normalize(name, it.Value)
			switch it.Key {
			case "pid":
				val = int64(0)
			case "oid", "extnamespace", "extowner":
				val = "{oid}"
			}
			out.SetKey(Normalize(name, it.Key), val)
		}
		return out
	}
	return v
}
