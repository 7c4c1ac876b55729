// Package pgtest starts a throw-away PostgreSQL cluster for tests: Debian's
// postgresql binaries (initdb, pg_ctl), a data directory in a fresh temp
// dir, listening on 127.0.0.1 on a free port and on a unix socket in that
// dir, trust authentication. Under root the server runs as the postgres
// user (runuser), as PostgreSQL refuses to run as root. Tests call Start,
// which skips with one clear line when the binaries are missing.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/proc"
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

// Cluster is a running (or stopped) test cluster.
type Cluster struct {
	t       testing.TB
	bin     string
	Dir     string // the temp dir (socket dir too)
	DataDir string
	Host    string // 127.0.0.1
	Port    int
	// User is the superuser name ("postgres"), with no password.
	User    string
	asUser  string // "postgres" when running under root, else ""
	running bool
}

// BinDir finds Debian's PostgreSQL binaries (GSALT_PG_BIN overrides), or "".
func BinDir() string {
	if d := os.Getenv("GSALT_PG_BIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// Start creates and starts a cluster, stopped and removed at the end of
// the test. It skips the test when PostgreSQL is not installed.
func Start(t testing.TB) *Cluster {
	t.Helper()
	bin := BinDir()
	if bin == "" {
		t.Skip("pgtest: PostgreSQL binaries not found (apt-get install postgresql, or set GSALT_PG_BIN); skipping the PostgreSQL test")
	}
	dir, err := os.MkdirTemp("", "gsalt-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, bin: bin, Dir: dir, DataDir: filepath.Join(dir, "data"), Host: "127.0.0.1", User: "postgres"}
	t.Cleanup(func() {
		c.Stop()
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
		if _, err := user.Lookup("postgres"); err != nil {
			t.Skip("pgtest: running as root and there is no postgres user to run the server; skipping the PostgreSQL test")
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(c.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if c.asUser != "" {
		if out, err := exec.Command("chown", c.asUser, c.DataDir).CombinedOutput(); err != nil {
			t.Fatalf("pgtest: chown: %v: %s", err, out)
		}
	}
	if out, err := c.cmd("initdb", "-D", c.DataDir, "-A", "trust", "-U", c.User, "--no-sync", "-E", "UTF8", "--locale", "C").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	c.Port = proc.FreePort(t)
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 50\nshared_buffers = 16MB\n", c.Port, dir)
	f, err := os.OpenFile(filepath.Join(c.DataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	return c
}

// cmd builds a command for a PostgreSQL binary, as the postgres user
// under root.
func (c *Cluster) cmd(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if c.asUser != "" {
		return exec.Command("runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// Start starts the server (again) and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	if c.running {
		return
	}
	logf := filepath.Join(c.Dir, "server.log")
	cmd := c.cmd("pg_ctl", "-D", c.DataDir, "-l", logf, "-w", "-t", "60", "start")
	cmd.Dir = c.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logf)
		c.t.Fatalf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	c.running = true
}

// Stop stops the server (fast shutdown); Start starts it again with the
// same data.
func (c *Cluster) Stop() {
	if !c.running {
		return
	}
	c.running = false
	if out, err := c.cmd("pg_ctl", "-D", c.DataDir, "-m", "fast", "-w", "-t", "60", "stop").CombinedOutput(); err != nil {
		c.t.Logf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
}

// CreateDB creates a database and, when schema is not "", runs it there.
func (c *Cluster) CreateDB(name, schema string) {
	c.t.Helper()
	c.Psql("postgres", "CREATE DATABASE "+name+" WITH ENCODING 'utf-8'")
	if schema != "" {
		c.Psql(name, schema)
	}
}

// Psql runs SQL in database db with psql and returns its unaligned,
// tuples-only output (fields separated by |).
func (c *Cluster) Psql(db, sql string) string {
	c.t.Helper()
	out, err := c.PsqlErr(db, sql)
	if err != nil {
		c.t.Fatalf("pgtest: psql %s: %v\n%s", db, err, out)
	}
	return out
}

// PsqlErr is Psql returning the error.
func (c *Cluster) PsqlErr(db, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", c.Host, "-p", strconv.Itoa(c.Port), "-U", c.User, "-d", db, "-c", sql)
	out, err := cmd.CombinedOutput()
	return strings.TrimRight(string(out), "\n"), err
}

// Options returns the returner.pgjsonb.* options reaching database db.
func (c *Cluster) Options(db string) map[string]any {
	return map[string]any{
		"returner.pgjsonb.host": c.Host,
		"returner.pgjsonb.port": int64(c.Port),
		"returner.pgjsonb.user": c.User,
		"returner.pgjsonb.pass": "unused",
		"returner.pgjsonb.db":   db,
	}
}
