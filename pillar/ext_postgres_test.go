package pillar_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/pgtest"
)

// TestPostgresExtPillarGolden compiles the postgres ext_pillar cases of
// testdata/ext_pg_cases.json (positional and keyword queries, depth,
// as_list, with_lists, ignore_null, as_json over json columns, psycopg2's
// %s and %% handling, a failing query) against a throwaway PostgreSQL
// cluster and compares them with what Salt 3006's Pillar and its postgres
// ext_pillar (psycopg2) made of the same cluster (ext_pg_golden.json).
// Starting the cluster takes ~20 s: the test runs with
// GSALT_POSTGRES_FULL=1 or -update.
func TestPostgresExtPillarGolden(t *testing.T) {
	if os.Getenv("GSALT_POSTGRES_FULL") != "1" && !testutil.Update() {
		t.Skip("TestPostgresExtPillarGolden: set GSALT_POSTGRES_FULL=1 to start a PostgreSQL cluster (~20 s); skipping")
	}
	c := pgtest.Start(t, pgtest.Options{PasswordTCP: true})
	c.MustPSQL(t, "postgres", "CREATE ROLE salt LOGIN PASSWORD 'salt'")
	c.MustPSQL(t, "postgres", "CREATE DATABASE salt OWNER salt")
	for _, q := range []string{
		"CREATE TABLE kv (n serial, minion_id text, k text, v text)",
		"INSERT INTO kv (minion_id, k, v) VALUES ('web1', 'role', 'web'), ('web1', 'port', '80'), ('web1', 'empty', NULL), ('web1', 'role', 'frontend'), ('db1', 'role', 'db')",
		"CREATE TABLE apps (n serial, minion_id text, app text, env text, setting text, value integer)",
		"INSERT INTO apps (minion_id, app, env, setting, value) VALUES ('web1', 'nginx', 'prod', 'workers', 4), ('web1', 'nginx', 'prod', 'conns', 1024), ('web1', 'nginx', 'dev', 'workers', 1), ('web1', 'php', 'prod', 'memory', 256), ('web1', 'php', 'prod', 'memory', 512), ('web1', 'php', 'dev', 'debug', NULL)",
		"CREATE TABLE users (n serial, minion_id text, name text, uid integer, admin boolean, quota double precision)",
		"INSERT INTO users (minion_id, name, uid, admin, quota) VALUES ('web1', 'alice', 1001, true, 1.5), ('web1', 'bob', 1002, false, NULL), ('db1', 'dba', 2001, true, 10)",
		"CREATE TABLE docs (n serial, minion_id text, doc json)",
		`INSERT INTO docs (minion_id, doc) VALUES ('web1', '{"z": 1, "a": {"b": [1, 2]}, "list": ["x"]}'), ('web1', '{"a": {"c": true}, "list": ["y"]}')`,
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO salt",
	} {
		c.MustPSQL(t, "salt", q)
	}
	extGolden(t, "ext_pg_cases.json", "ext_pg_golden.json", map[string]string{"PGPORT": strconv.Itoa(c.Port)})
}
