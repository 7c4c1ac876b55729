package builtin_test

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

// TestPostgresGolden runs the postgres execution module against a
// throwaway PostgreSQL cluster (internal/testutil/pgtest): databases,
// roles, groups, tablespaces, schemas, extensions, languages and
// privileges are created, changed, queried and removed, with the error
// cases (a wrong password over TCP, an unknown database, bad arguments),
// and every return is compared with Salt 3006's on the same kind of
// cluster (testdata/golden/postgres.json; -update-golden regenerates it,
// Salt and gsalt then running the sequence one after the other on one
// cluster, which the sequence leaves as it found it). The cluster's roles
// and databases are checked with psql at the end.
func TestPostgresGolden(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{PasswordTCP: true, AsPostgres: true})
	ts := filepath.Join(c.Dir, "ts")
	if err := os.Mkdir(ts, 0o700); err != nil {
		t.Fatal(err)
	}
	c.ChownPostgres(t, ts)
	tcp := []any{"host", "127.0.0.1", "port", c.Port}
	db := []any{"maintenance_db", "gsaltdb"}
	kw := func(parts ...[]any) []any {
		var out []any
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	a := func(v ...any) []any { return v }
	calls := []salttest.Call{
		{Name: "version", Fun: "postgres.version"},
		{Name: "db_exists before", Fun: "postgres.db_exists", Args: a("gsaltdb")},
		{Name: "db_create", Fun: "postgres.db_create", Args: a("gsaltdb"), Kwargs: a("encoding", "UTF8", "template", "template0", "lc_collate", "C", "lc_ctype", "C")},
		{Name: "db_create again", Fun: "postgres.db_create", Args: a("gsaltdb")},
		{Name: "db_create bad owner", Fun: "postgres.db_create", Args: a("gsaltdb2"), Kwargs: a("owner", `a"b`)},
		{Name: "db_exists", Fun: "postgres.db_exists", Args: a("gsaltdb")},
		{Name: "db_list", Fun: "postgres.db_list", Sorted: true},
		{Name: "user_exists before", Fun: "postgres.user_exists", Args: a("gsaltuser")},
		{Name: "user_create", Fun: "postgres.user_create", Args: a("gsaltuser"), Kwargs: a("rolepassword", "s3cret", "createdb", true)},
		{Name: "user_create again", Fun: "postgres.user_create", Args: a("gsaltuser")},
		{Name: "user_create bad encryption", Fun: "postgres.user_create", Args: a("gsaltuser9"), Kwargs: a("rolepassword", "x", "encrypted", "sha1")},
		{Name: "role_get", Fun: "postgres.role_get", Args: a("gsaltuser"), Kwargs: a("return_password", true)},
		{Name: "user_update", Fun: "postgres.user_update", Args: a("gsaltuser"), Kwargs: a("createdb", false, "connlimit", 5, "valid_until", "2030-01-02 03:04:05")},
		{Name: "role_get updated", Fun: "postgres.role_get", Args: a("gsaltuser")},
		{Name: "user_update missing", Fun: "postgres.user_update", Args: a("gsaltnobody"), Kwargs: a("createdb", true)},
		{Name: "group_create", Fun: "postgres.group_create", Args: a("gsaltgroup"), Kwargs: a("createroles", true)},
		{Name: "user_update groups", Fun: "postgres.user_update", Args: a("gsaltuser"), Kwargs: a("groups", "gsaltgroup")},
		{Name: "group_update", Fun: "postgres.group_update", Args: a("gsaltgroup"), Kwargs: a("createroles", false, "rolepassword", "grouppw", "encrypted", "scram-sha-256")},
		{Name: "user_list", Fun: "postgres.user_list", Sorted: true},
		{Name: "psql_query roles", Fun: "postgres.psql_query", Args: a("SELECT rolname, rolcanlogin, rolcreatedb, rolcreaterole, rolconnlimit, rolvaliduntil FROM pg_roles WHERE rolname LIKE 'gsalt%' ORDER BY 1;")},
		{Name: "psql_query write", Fun: "postgres.psql_query", Args: a("WITH u AS (UPDATE pg_authid SET rolconnlimit = 7 WHERE rolname = 'gsaltuser' RETURNING rolconnlimit) SELECT * FROM u"), Kwargs: a("write", true)},
		{Name: "db_alter owner", Fun: "postgres.db_alter", Args: a("gsaltdb"), Kwargs: a("owner", "gsaltuser")},
		{Name: "db_alter nothing", Fun: "postgres.db_alter", Args: a("gsaltdb")},
		{Name: "db_list owner", Fun: "postgres.db_list", Sorted: true},
		{Name: "tablespace_create", Fun: "postgres.tablespace_create", Args: a("gsaltts", ts), Kwargs: a("owner", "gsaltuser")},
		{Name: "tablespace_exists", Fun: "postgres.tablespace_exists", Args: a("gsaltts")},
		{Name: "tablespace_alter", Fun: "postgres.tablespace_alter", Args: a("gsaltts"), Kwargs: a("set_option", payload.NewMap("seq_page_cost", "1.5"))},
		{Name: "tablespace_list", Fun: "postgres.tablespace_list", Sorted: true},
		{Name: "schema_exists before", Fun: "postgres.schema_exists", Args: a("gsaltdb", "gsaltschema")},
		{Name: "schema_create", Fun: "postgres.schema_create", Args: a("gsaltdb", "gsaltschema"), Kwargs: a("owner", "gsaltuser")},
		{Name: "schema_create again", Fun: "postgres.schema_create", Args: a("gsaltdb", "gsaltschema")},
		{Name: "schema_get", Fun: "postgres.schema_get", Args: a("gsaltdb", "gsaltschema")},
		{Name: "schema_list", Fun: "postgres.schema_list", Args: a("gsaltdb"), Sorted: true},
		{Name: "is_available_extension", Fun: "postgres.is_available_extension", Args: a("UUID-OSSP")},
		{Name: "get_available_extension", Fun: "postgres.get_available_extension", Args: a("uuid-ossp")},
		{Name: "create_extension", Fun: "postgres.create_extension", Args: a("uuid-ossp"), Kwargs: kw(db, a("schema", "gsaltschema"))},
		{Name: "create_metadata", Fun: "postgres.create_metadata", Args: a("uuid-ossp"), Kwargs: kw(db, a("schema", "public", "ext_version", "9.0"))},
		{Name: "is_installed_extension", Fun: "postgres.is_installed_extension", Args: a("uuid-ossp"), Kwargs: db},
		{Name: "installed_extensions", Fun: "postgres.installed_extensions", Kwargs: db, Sorted: true},
		{Name: "create_extension move", Fun: "postgres.create_extension", Args: a("uuid-ossp"), Kwargs: kw(db, a("schema", "public"))},
		{Name: "drop_extension", Fun: "postgres.drop_extension", Args: a("uuid-ossp"), Kwargs: db},
		{Name: "drop_extension absent", Fun: "postgres.drop_extension", Args: a("uuid-ossp"), Kwargs: db},
		{Name: "language_list", Fun: "postgres.language_list", Args: a("gsaltdb"), Sorted: true},
		{Name: "language_exists", Fun: "postgres.language_exists", Args: a("plpgsql", "gsaltdb")},
		{Name: "language_create existing", Fun: "postgres.language_create", Args: a("plpgsql", "gsaltdb")},
		{Name: "has_privileges owner", Fun: "postgres.has_privileges", Args: a("gsaltuser", "gsaltdb", "database", "CONNECT")},
		{Name: "privileges_grant schema", Fun: "postgres.privileges_grant", Args: a("gsaltgroup", "gsaltschema", "schema", "USAGE"), Kwargs: db},
		{Name: "privileges_list schema", Fun: "postgres.privileges_list", Args: a("gsaltschema", "schema"), Kwargs: db},
		{Name: "has_privileges schema", Fun: "postgres.has_privileges", Args: a("gsaltgroup", "gsaltschema", "schema", "USAGE"), Kwargs: db},
		{Name: "has_privileges schema all", Fun: "postgres.has_privileges", Args: a("gsaltgroup", "gsaltschema", "schema", "ALL"), Kwargs: db},
		{Name: "privileges_grant schema again", Fun: "postgres.privileges_grant", Args: a("gsaltgroup", "gsaltschema", "schema", "usage"), Kwargs: db},
		{Name: "privileges_revoke schema", Fun: "postgres.privileges_revoke", Args: a("gsaltgroup", "gsaltschema", "schema", "USAGE"), Kwargs: db},
		{Name: "has_privileges revoked", Fun: "postgres.has_privileges", Args: a("gsaltgroup", "gsaltschema", "schema", "USAGE"), Kwargs: db},
		{Name: "privileges_grant database opt", Fun: "postgres.privileges_grant", Args: a("gsaltgroup", "gsaltdb", "database", "ALL"), Kwargs: a("grant_option", true)},
		{Name: "privileges_list database", Fun: "postgres.privileges_list", Args: a("gsaltdb", "database")},
		{Name: "has_privileges database opt", Fun: "postgres.has_privileges", Args: a("gsaltgroup", "gsaltdb", "database", "ALL"), Kwargs: a("grant_option", true)},
		{Name: "privileges_list group", Fun: "postgres.privileges_list", Args: a("gsaltgroup", "group")},
		{Name: "has_privileges group", Fun: "postgres.has_privileges", Args: a("gsaltuser", "gsaltgroup", "group")},
		{Name: "privileges_grant bad privilege", Fun: "postgres.privileges_grant", Args: a("gsaltgroup", "gsaltdb", "database", "SELECT")},
		{Name: "privileges_grant group privileges", Fun: "postgres.privileges_grant", Args: a("gsaltgroup", "gsaltuser", "group", "SELECT")},
		{Name: "privileges_list bad type", Fun: "postgres.privileges_list", Args: a("x", "view")},
		{Name: "tcp user_exists", Fun: "postgres.user_exists", Args: a("gsaltgroup"), Kwargs: kw(tcp, a("user", "gsaltuser", "password", "s3cret"))},
		{Name: "tcp bad password", Fun: "postgres.db_list", Kwargs: kw(tcp, a("user", "gsaltuser", "password", "wrong"))},
		{Name: "tcp bad password version", Fun: "postgres.version", Kwargs: kw(tcp, a("user", "gsaltuser", "password", "wrong"))},
		{Name: "unknown database", Fun: "postgres.db_list", Kwargs: a("maintenance_db", "gsaltnosuchdb")},
		{Name: "unknown database create", Fun: "postgres.db_create", Args: a("gsaltdb3"), Kwargs: a("maintenance_db", "gsaltnosuchdb")},
		{Name: "unknown database role_get", Fun: "postgres.role_get", Args: a("postgres"), Kwargs: a("maintenance_db", "gsaltnosuchdb")},
		{Name: "schema_remove", Fun: "postgres.schema_remove", Args: a("gsaltdb", "gsaltschema")},
		{Name: "schema_remove absent", Fun: "postgres.schema_remove", Args: a("gsaltdb", "gsaltschema")},
		{Name: "tablespace_remove", Fun: "postgres.tablespace_remove", Args: a("gsaltts")},
		{Name: "tablespace_exists after", Fun: "postgres.tablespace_exists", Args: a("gsaltts")},
		{Name: "db_remove", Fun: "postgres.db_remove", Args: a("gsaltdb")},
		{Name: "db_remove absent", Fun: "postgres.db_remove", Args: a("gsaltdb")},
		{Name: "user_remove", Fun: "postgres.user_remove", Args: a("gsaltuser")},
		{Name: "user_remove absent", Fun: "postgres.user_remove", Args: a("gsaltuser")},
		{Name: "group_remove", Fun: "postgres.group_remove", Args: a("gsaltgroup")},
		{Name: "user_list after", Fun: "postgres.psql_query", Args: a("SELECT rolname FROM pg_roles WHERE rolname LIKE 'gsalt%'")},
		{Name: "datadir_exists", Fun: "postgres.datadir_exists", Args: a("/nonexistent/gsalt")},
	}
	if !pgFull() {
		calls = pgShort(calls, "version", "db_exists before", "db_create", "db_exists", "user_exists before", "user_create",
			"user_create again", "role_get", "unknown database", "db_remove", "db_remove absent", "user_remove", "user_remove absent")
	}
	opts := []any{"postgres.host", c.Sock, "postgres.port", c.Port}
	salttest.Run(t, salttest.Suite{Name: "postgres", Calls: calls, Grains: pgGrains(), Opts: opts, Normalize: pgtest.Normalize}, goldenRegistry(t))
	if got := c.MustPSQL(t, "postgres", "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'gsalt%'"); got != "0" {
		// the sequence removes what it creates
		t.Errorf("roles left behind: %s", got)
	}
	if got := c.MustPSQL(t, "postgres", "SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database"); got != "postgres,template0,template1" {
		t.Errorf("databases after the run: %s", strings.TrimSpace(got))
	}
}

// pgFull reports whether the whole sequence runs: with
// GSALT_POSTGRES_FULL=1 or when the golden file is regenerated. Each psql
// run costs a fifth of a second (Debian's psql is a Perl wrapper), so the
// full sequence takes ~25 s; by default a short part of it runs.
func pgFull() bool {
	if os.Getenv("GSALT_POSTGRES_FULL") == "1" {
		return true
	}
	f := flag.Lookup("update-golden")
	return f != nil && f.Value.String() == "true"
}

// pgShort keeps the calls named.
func pgShort(calls []salttest.Call, names ...string) []salttest.Call {
	var out []salttest.Call
	for _, c := range calls {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

func pgGrains() *payload.Map {
	return payload.NewMap("kernel", "Linux", "os", "Debian", "os_family", "Debian", "osrelease", "12", "id", "golden")
}
