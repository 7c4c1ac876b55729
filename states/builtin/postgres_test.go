package builtin

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/pgtest"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// pgStateRet keeps what stateRet keeps plus postgres_schema's "dbname",
// then normalises the cluster's folder, port and pids.
func pgStateRet(name string, v any) any {
	m, ok := v.(*payload.Map)
	if !ok || m.Len() != 1 {
		return pgtest.Normalize(name, v)
	}
	r, ok := m.Items()[0].Value.(*payload.Map)
	if !ok || !r.Has("__run_num__") {
		return pgtest.Normalize(name, v)
	}
	out := &payload.Map{}
	for _, k := range []string{"name", "dbname", "result", "changes", "comment", "warnings"} {
		if x, ok := r.Get(k); ok {
			out.Set(k, x)
		}
	}
	// A traceback's frames differ (Salt's files, gsalt's one frame): keep
	// the exception line.
	if cm, ok := out.Get("comment"); ok {
		text := payload.Text(cm)
		if rest, ok := strings.CutPrefix(text, "An exception occurred in this state: Traceback"); ok {
			lines := strings.Split(strings.TrimSpace(rest), "\n")
			out.Set("comment", "An exception occurred in this state: "+lines[len(lines)-1])
		}
	}
	return pgtest.Normalize(name, out)
}

// TestPostgresStatesGolden runs the postgres_* states through
// state.single against a throwaway PostgreSQL cluster: test=True
// predictions, creation, no-op reruns, updates (flags, password, expiry,
// group membership, owner), the unfixable cases (encoding, tablespace
// location), failures (a wrong password over TCP, an unknown maintenance
// database, a language that is not installed) and removal, comparing each
// ret with Salt 3006's (testdata/golden/postgres_states.json;
// -update-golden regenerates it). The full sequence needs
// GSALT_POSTGRES_FULL=1 (each psql run costs ~0.2 s); by default a short
// part runs. The cluster must be left as found.
func TestPostgresStatesGolden(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{PasswordTCP: true, AsPostgres: true})
	ts := filepath.Join(c.Dir, "ts")
	if err := os.Mkdir(ts, 0o700); err != nil {
		t.Fatal(err)
	}
	c.ChownPostgres(t, ts)
	db := []any{"maintenance_db", "gsaltd"}
	cat := func(parts ...[]any) []any {
		var out []any
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	kv := func(v ...any) []any { return v }
	calls := []salttest.Call{
		single("user present test", "postgres_user.present", true, "name", "gsaltu", "password", "pw1", "createdb", true),
		single("user present", "postgres_user.present", false, "name", "gsaltu", "password", "pw1", "createdb", true),
		single("user present again", "postgres_user.present", false, "name", "gsaltu", "password", "pw1", "createdb", true),
		single("user update test", "postgres_user.present", true, "name", "gsaltu", "password", "pw1", "createdb", false),
		single("user update", "postgres_user.present", false, "name", "gsaltu", "password", "pw2", "createdb", false, "valid_until", "2031-05-06 07:08:09"),
		single("user update again", "postgres_user.present", false, "name", "gsaltu", "password", "pw2", "createdb", false, "valid_until", "2031-05-06 07:08:09"),
		single("user scram", "postgres_user.present", false, "name", "gsaltu", "password", "pw3", "encrypted", "scram-sha-256"),
		single("user scram again", "postgres_user.present", false, "name", "gsaltu", "password", "pw3", "encrypted", "scram-sha-256"),
		single("user bad encryption", "postgres_user.present", false, "name", "gsaltu", "password", "pw3", "encrypted", "sha1"),
		single("group present", "postgres_group.present", false, "name", "gsaltg", "createroles", true),
		single("group update", "postgres_group.present", false, "name", "gsaltg", "login", true, "password", "gpw"),
		single("group again", "postgres_group.present", false, "name", "gsaltg", "login", true, "password", "gpw"),
		single("user groups", "postgres_user.present", false, "name", "gsaltu", "groups", []any{"gsaltg"}),
		single("user groups again", "postgres_user.present", false, "name", "gsaltu", "groups", "gsaltg"),
		single("database present test", "postgres_database.present", true, "name", "gsaltd", "owner", "gsaltu", "encoding", "UTF8", "template", "template0"),
		single("database present", "postgres_database.present", false, "name", "gsaltd", "owner", "gsaltu", "encoding", "UTF8", "template", "template0"),
		single("database present again", "postgres_database.present", false, "name", "gsaltd", "owner", "gsaltu", "encoding", "utf8"),
		single("database wrong collate", "postgres_database.present", false, "name", "gsaltd", "lc_collate", "en_US.UTF-8"),
		single("database owner test", "postgres_database.present", true, "name", "gsaltd", "owner", "postgres"),
		single("database owner", "postgres_database.present", false, "name", "gsaltd", "owner", "postgres"),
		single("tablespace present test", "postgres_tablespace.present", true, "name", "gsaltts", "directory", ts),
		single("tablespace present", "postgres_tablespace.present", false, "name", "gsaltts", "directory", ts, "owner", "gsaltu"),
		single("tablespace present again", "postgres_tablespace.present", false, "name", "gsaltts", "directory", ts, "owner", "gsaltu"),
		single("tablespace options test", "postgres_tablespace.present", true, "name", "gsaltts", "directory", ts, "options", payload.NewMap("seq_page_cost", "1.5")),
		single("tablespace options", "postgres_tablespace.present", false, "name", "gsaltts", "directory", ts, "options", payload.NewMap("seq_page_cost", "1.5")),
		single("tablespace owner", "postgres_tablespace.present", false, "name", "gsaltts", "directory", ts, "owner", "postgres"),
		single("tablespace wrong location", "postgres_tablespace.present", false, "name", "gsaltts", "directory", "/nonexistent/gsalt"),
		single("tablespace absent test", "postgres_tablespace.absent", true, "name", "gsaltts"),
		single("tablespace absent", "postgres_tablespace.absent", false, "name", "gsaltts"),
		single("tablespace absent again", "postgres_tablespace.absent", false, "name", "gsaltts"),
		single("schema present test", "postgres_schema.present", true, "dbname", "gsaltd", "name", "gsalts", "owner", "gsaltu"),
		single("schema present", "postgres_schema.present", false, "dbname", "gsaltd", "name", "gsalts", "owner", "gsaltu"),
		single("schema present again", "postgres_schema.present", false, "dbname", "gsaltd", "name", "gsalts"),
		single("extension present test", "postgres_extension.present", true, cat(kv("name", "uuid-ossp", "schema", "gsalts"), db)...),
		single("extension present", "postgres_extension.present", false, cat(kv("name", "uuid-ossp", "schema", "gsalts"), db)...),
		single("extension present again", "postgres_extension.present", false, cat(kv("name", "uuid-ossp", "schema", "gsalts"), db)...),
		single("extension move test", "postgres_extension.present", true, cat(kv("name", "uuid-ossp", "schema", "public"), db)...),
		single("extension move", "postgres_extension.present", false, cat(kv("name", "uuid-ossp", "schema", "public"), db)...),
		single("extension absent test", "postgres_extension.absent", true, cat(kv("name", "uuid-ossp"), db)...),
		single("extension absent", "postgres_extension.absent", false, cat(kv("name", "uuid-ossp"), db)...),
		single("extension absent quoted", "postgres_extension.absent", false, cat(kv("name", `"uuid-ossp"`), db)...),
		single("extension absent again", "postgres_extension.absent", false, cat(kv("name", "uuid-ossp"), db)...),
		single("extension missing", "postgres_extension.present", false, cat(kv("name", "gsalt_no_such_ext"), db)...),
		single("privileges present test", "postgres_privileges.present", true, cat(kv("name", "gsaltg", "object_name", "gsalts", "object_type", "schema", "privileges", []any{"USAGE", "CREATE"}), db)...),
		single("privileges present", "postgres_privileges.present", false, cat(kv("name", "gsaltg", "object_name", "gsalts", "object_type", "schema", "privileges", []any{"USAGE", "CREATE"}), db)...),
		single("privileges present again", "postgres_privileges.present", false, cat(kv("name", "gsaltg", "object_name", "gsalts", "object_type", "schema", "privileges", []any{"USAGE"}), db)...),
		single("privileges absent test", "postgres_privileges.absent", true, cat(kv("name", "gsaltg", "object_name", "gsalts", "object_type", "schema", "privileges", []any{"USAGE", "CREATE"}), db)...),
		single("privileges absent", "postgres_privileges.absent", false, cat(kv("name", "gsaltg", "object_name", "gsalts", "object_type", "schema", "privileges", []any{"USAGE", "CREATE"}), db)...),
		single("privileges absent again", "postgres_privileges.absent", false, cat(kv("name", "gsaltg", "object_name", "gsalts", "object_type", "schema", "privileges", []any{"USAGE"}), db)...),
		single("privileges group", "postgres_privileges.present", false, "name", "gsaltu", "object_name", "gsaltg", "object_type", "group"),
		single("privileges group test", "postgres_privileges.present", true, "name", "postgres", "object_name", "gsaltg", "object_type", "group"),
		single("language present", "postgres_language.present", false, "name", "plpgsql", "maintenance_db", "gsaltd"),
		single("language missing test", "postgres_language.present", true, "name", "gsaltlang", "maintenance_db", "gsaltd"),
		single("language missing", "postgres_language.present", false, "name", "gsaltlang", "maintenance_db", "gsaltd"),
		single("language absent test", "postgres_language.absent", true, "name", "plpgsql", "maintenance_db", "gsaltd"),
		single("language absent missing", "postgres_language.absent", false, "name", "gsaltlang", "maintenance_db", "gsaltd"),
		single("schema absent test", "postgres_schema.absent", true, "dbname", "gsaltd", "name", "gsalts"),
		single("schema absent", "postgres_schema.absent", false, "dbname", "gsaltd", "name", "gsalts"),
		single("schema absent again", "postgres_schema.absent", false, "dbname", "gsaltd", "name", "gsalts"),
		single("tcp wrong password", "postgres_user.present", false, "name", "gsaltx", "db_host", "127.0.0.1", "db_port", c.Port, "db_user", "gsaltu", "db_password", "wrong"),
		single("tcp right password", "postgres_database.present", false, "name", "gsaltd", "db_host", "127.0.0.1", "db_port", c.Port, "db_user", "gsaltu", "db_password", "pw3"),
		single("unknown maintenance db", "postgres_database.present", false, "name", "gsaltd2", "maintenance_db", "gsalt_nosuchdb"),
		single("database absent test", "postgres_database.absent", true, "name", "gsaltd"),
		single("database absent", "postgres_database.absent", false, "name", "gsaltd"),
		single("database absent again", "postgres_database.absent", false, "name", "gsaltd"),
		single("user absent test", "postgres_user.absent", true, "name", "gsaltu"),
		single("user absent", "postgres_user.absent", false, "name", "gsaltu"),
		single("user absent again", "postgres_user.absent", false, "name", "gsaltu"),
		single("group absent", "postgres_group.absent", false, "name", "gsaltg"),
		single("group absent again", "postgres_group.absent", false, "name", "gsaltg"),
	}
	if !pgStatesFull() {
		var short []salttest.Call
		for _, c := range calls {
			if slices.Contains([]string{"user present test", "user present", "user present again", "database present test", "database present",
				"database present again", "database absent", "user absent", "user absent again"}, c.Name) {
				short = append(short, c)
			}
		}
		calls = short
	}
	s := salttest.Suite{Name: "postgres_states", Calls: calls, Grains: payloadLinuxGrains(), Opts: []any{"postgres.host", c.Sock, "postgres.port", c.Port},
		Normalize: pgStateRet}
	salttest.Run(t, s, suiteRegistry(t))
	if got := c.MustPSQL(t, "postgres", "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'gsalt%'"); got != "0" {
		t.Errorf("roles left behind: %s", got)
	}
	if got := c.MustPSQL(t, "postgres", "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database"); got != "postgres,template0,template1" {
		t.Errorf("databases after the run: %s", got)
	}
}

// pgStatesFull: GSALT_POSTGRES_FULL=1, or the golden file is regenerated.
func pgStatesFull() bool {
	if os.Getenv("GSALT_POSTGRES_FULL") == "1" {
		return true
	}
	f := flag.Lookup("update-golden")
	return f != nil && f.Value.String() == "true"
}

// TestPostgresInitdbGolden runs postgres_initdb.present beside Salt
// 3006 (testdata/golden/postgres_initdb.json): test=True, a failing
// initdb (password authentication without a password), a real one and
// the rerun that finds the directory. Without GSALT_POSTGRES_FULL=1 only
// the test=True step runs.
func TestPostgresInitdbGolden(t *testing.T) {
	c := pgtest.Prepare(t, pgtest.Options{AsPostgres: true})
	parent := filepath.Join(c.Dir, "initdb")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	c.ChownPostgres(t, parent)
	data := filepath.Join(parent, "data")
	calls := []salttest.Call{
		single("initdb test", "postgres_initdb.present", true, "name", data, "password", "pw"),
		single("initdb no password", "postgres_initdb.present", false, "name", data),
		single("initdb", "postgres_initdb.present", false, "name", data, "password", "pw", "auth", "md5", "locale", "C"),
		single("initdb again", "postgres_initdb.present", false, "name", data, "password", "pw"),
		{Name: "datadir_exists", Fun: "postgres.datadir_exists", Args: []any{data}},
	}
	if !pgStatesFull() {
		calls = calls[:1]
	}
	clean := func() {
		if err := os.RemoveAll(data); err != nil {
			t.Fatal(err)
		}
	}
	salttest.Run(t, salttest.Suite{Name: "postgres_initdb", Calls: calls, Grains: payloadLinuxGrains(), Normalize: pgStateRet, AfterSalt: clean}, suiteRegistry(t))
	clean()
}
