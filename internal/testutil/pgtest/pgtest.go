// Package pgtest starts a throwaway PostgreSQL cluster for tests: Debian's
// server binaries (initdb, postgres, psql), a data directory in a fresh
// temporary folder, a server listening on 127.0.0.1 at a free port and on
// a unix socket in that folder, stopped and removed when the test ends.
// Under root the server and psql run as the postgres system user, as
// PostgreSQL refuses to run as root. Start skips the test with one line
// when something it needs is missing. Test code only.
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

// PgjsonbSchema is the schema Salt's pgjsonb returner documents (the
// admin creates it; neither Salt nor gsalt creates these tables).
const PgjsonbSchema = `
CREATE TABLE jids (
   jid varchar(255) NOT NULL primary key,
   load jsonb NOT NULL
);
CREATE INDEX idx_jids_jsonb on jids USING gin (load) WITH (fastupdate=on);
CREATE TABLE salt_returns (
  fun varchar(50) NOT NULL,
  jid varchar(255) NOT NULL,
  return jsonb NOT NULL,
  id varchar(255) NOT NULL,
  success varchar(10) NOT NULL,
  full_ret jsonb NOT NULL,
  alter_time TIMESTAMP WITH TIME ZONE DEFAULT NOW());
CREATE INDEX idx_salt_returns_id ON salt_returns (id);
CREATE INDEX idx_salt_returns_jid ON salt_returns (jid);
CREATE INDEX idx_salt_returns_fun ON salt_returns (fun);
CREATE INDEX idx_salt_returns_return ON salt_returns USING gin (return) with (fastupdate=on);
CREATE INDEX idx_salt_returns_full_ret ON salt_returns USING gin (full_ret) with (fastupdate=on);
CREATE SEQUENCE seq_salt_events_id;
CREATE TABLE salt_events (
    id BIGINT NOT NULL UNIQUE DEFAULT nextval('seq_salt_events_id'),
    tag varchar(255) NOT NULL,
    data jsonb NOT NULL,
    alter_time TIMESTAMP WITH TIME ZONE DEFAULT NOW(),
    master_id varchar(255) NOT NULL);
CREATE INDEX idx_salt_events_tag on salt_events (tag);
CREATE INDEX idx_salt_events_data ON salt_events USING gin (data) with (fastupdate=on);
`

// Options tune Start. The zero value trusts every connection and runs
// without root too.
type Options struct {
	// PasswordTCP makes TCP connections check md5/SCRAM passwords
	// (socket connections stay trusted).
	PasswordTCP bool
	// AsPostgres needs root and psql on PATH (skipping the test
	// otherwise): the code under test runs psql as the postgres system
	// user, as Salt's postgres module does under root.
	AsPostgres bool
}

// Cluster is a throwaway PostgreSQL server.
type Cluster struct {
	// Dir holds data/ and sock/; Data is the data directory, Sock the
	// unix socket folder (the --host value for local connections).
	Dir, Data, Sock string
	// Host (127.0.0.1) and Port are the TCP address.
	Host string
	Port int
	// User is the superuser ("postgres"), with no password.
	User string
	// Bin is the folder of initdb, postgres and psql.
	Bin  string
	cred *syscall.Credential // the postgres user under root, else nil
	srv  *proc.Proc
}

// BinDir finds the folder of the server binaries (GSALT_PG_BIN
// overrides), or "".
func BinDir() string {
	if d := os.Getenv("GSALT_PG_BIN"); d != "" {
		return d
	}
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
// stopped and removed when the test ends.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	c := Prepare(t, o)
	c.initdb(t, o)
	c.Port = proc.FreePort(t)
	c.Start(t)
	return c
}

// Prepare checks what Start needs and creates the cluster's folders (the
// top one open to all, data/ and sock/ owned by the server's user)
// without initialising or starting anything.
func Prepare(t testing.TB, o Options) *Cluster {
	t.Helper()
	bin := BinDir()
	if bin == "" {
		t.Skip("pgtest: no PostgreSQL server binaries (apt-get install postgresql, or set GSALT_PG_BIN); skipping")
	}
	if o.AsPostgres {
		if _, err := exec.LookPath("psql"); err != nil {
			t.Skip("pgtest: no psql on PATH; skipping")
		}
		if os.Geteuid() != 0 {
			t.Skip("pgtest: the test runs psql as the postgres user and needs root; skipping")
		}
	}
	c := &Cluster{Host: "127.0.0.1", User: "postgres", Bin: bin}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		pw, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("pgtest: running as root and there is no postgres system user to run the server; skipping")
		}
		uid, _ = strconv.Atoi(pw.Uid)
		gid, _ = strconv.Atoi(pw.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "gsalt-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	c.Dir, c.Data, c.Sock = dir, filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{c.Data, c.Sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if c.cred != nil {
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(c.Sock, 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// command builds a command for a PostgreSQL binary, run as the postgres
// user under root.
func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, name), args...)
	cmd.Dir = c.Dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

// initdb creates the data directory.
func (c *Cluster) initdb(t testing.TB, o Options) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(2*time.Minute))
	defer cancel()
	host := "trust"
	if o.PasswordTCP {
		host = "md5"
	}
	cmd := c.command(ctx, "initdb", "-D", c.Data, "-U", c.User, "-E", "UTF8", "--locale=C",
		"--auth-local=trust", "--auth-host="+host, "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
}

// Start starts the server (again, after Stop, on the same port and data)
// and waits until it answers.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if c.srv != nil && !c.srv.Exited() {
		return
	}
	srv := c.command(context.Background(), "postgres", "-D", c.Data, "-k", c.Sock, "-p", strconv.Itoa(c.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "shared_buffers=16MB", "-c", "max_connections=50")
	c.srv = proc.Start(t, "postgres", srv, proc.Options{Grace: 20 * time.Second})
	p := c.srv
	deadline := time.Now().Add(testutil.Scale(60 * time.Second))
	for {
		if _, err := c.PSQL("postgres", "SELECT 1"); err == nil {
			return
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("pgtest: postgres did not start:\n%s", p.Tail(3000))
		}
		time.Sleep(50 * time.Millisecond) // polling psql until the server answers
	}
}

// Stop stops the server with a fast shutdown (SIGINT: clients are
// disconnected) and waits for it; Start starts it again.
func (c *Cluster) Stop() {
	p := c.srv
	if p == nil || p.Exited() {
		return
	}
	_ = p.Signal(syscall.SIGINT)
	select {
	case <-p.Done():
	case <-time.After(testutil.Scale(60 * time.Second)):
		p.Kill()
	}
}

// PSQL runs one query as the superuser over the socket and returns its
// unaligned, tuples-only output (fields separated by |).
func (c *Cluster) PSQL(db, query string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(60*time.Second))
	defer cancel()
	cmd := c.command(ctx, "psql", "--no-psqlrc", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", c.Sock, "-p", strconv.Itoa(c.Port), "-U", c.User, "-d", db, "-c", query)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("psql %q: %w: %s", query, err, out)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// MustPSQL is PSQL failing the test on error.
func (c *Cluster) MustPSQL(t testing.TB, db, query string) string {
	t.Helper()
	out, err := c.PSQL(db, query)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CreateDB creates a UTF-8 database and, when schema is not "", runs it
// there.
func (c *Cluster) CreateDB(t testing.TB, name, schema string) {
	t.Helper()
	c.MustPSQL(t, "postgres", "CREATE DATABASE "+name+" WITH ENCODING 'utf-8'")
	if schema != "" {
		c.MustPSQL(t, name, schema)
	}
}

// PgjsonbOptions returns the returner.pgjsonb.* options reaching
// database db over TCP as the superuser.
func (c *Cluster) PgjsonbOptions(db string) map[string]any {
	return map[string]any{
		"returner.pgjsonb.host": c.Host,
		"returner.pgjsonb.port": int64(c.Port),
		"returner.pgjsonb.user": c.User,
		"returner.pgjsonb.pass": "unused",
		"returner.pgjsonb.db":   db,
	}
}

// ChownPostgres gives path to the server's user (a tablespace folder,
// say); without root it is the current user already.
func (c *Cluster) ChownPostgres(t testing.TB, path string) {
	t.Helper()
	if c.cred == nil {
		return
	}
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
