package builtin

// This file is Salt's postgres execution module (salt/modules/postgres.py)
// over the psql binary: every function builds the same psql command line
// Salt builds (--no-align --no-readline --no-psqlrc --no-password, then
// --username/--host/--port/--dbname) and runs it through cmd.run_all as
// the runas user, with a throwaway PGPASSFILE; queries that read go through
// psql_query's "COPY (...) TO STDOUT WITH CSV HEADER" and are parsed as CSV.
// Returns, log lines and the (sometimes odd) SQL Salt sends are the same.

import (
	"context"
	"crypto/hmac"
	"crypto/md5" //nolint:gosec // PostgreSQL's md5 password verifier format
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// Postgres extension lifecycle flags (create_metadata's list items).
const (
	PostgresExtNotInstalled = "EXTENSION NOT INSTALLED"
	PostgresExtInstalled    = "EXTENSION INSTALLED"
	PostgresExtToUpgrade    = "EXTENSION TO UPGRADE"
	PostgresExtToMove       = "EXTENSION TO MOVE"
	// PostgresDefaultEncryption is _DEFAULT_PASSWORDS_ENCRYPTION.
	PostgresDefaultEncryption = "md5"
)

var pgPrivilegesMap = map[byte]string{
	'a': "INSERT", 'C': "CREATE", 'D': "TRUNCATE", 'c': "CONNECT", 't': "TRIGGER", 'r': "SELECT",
	'U': "USAGE", 'T': "TEMPORARY", 'w': "UPDATE", 'X': "EXECUTE", 'x': "REFERENCES", 'd': "DELETE", '*': "GRANT",
}

var pgPrivilegeTypeMap = map[string]string{
	"table": "arwdDxt", "tablespace": "C", "language": "U", "sequence": "rwU", "schema": "UC", "database": "CTc", "function": "X",
}

var pgPrivilegeObjects = map[string]bool{
	"schema": true, "tablespace": true, "language": true, "sequence": true, "table": true, "group": true, "database": true, "function": true,
}

// pgConn is the connection arguments every function takes: the psql
// --username/--host/--port/--dbname values, the password for the
// PGPASSFILE and the system user psql runs as. Values are as given (nil is
// None).
type pgConn struct {
	user, host, port, db, password, runas any
}

func pgConnOf(a *modules.Args) pgConn {
	return pgConn{user: a.Get("user"), host: a.Get("host"), port: a.Get("port"), db: a.Get("maintenance_db"),
		password: a.Get("password"), runas: a.Get("runas")}
}

// pgSchemaConn maps the schema_* functions' argument names (user is the
// system user, db_* the connection) onto a pgConn for database dbname.
func pgSchemaConn(a *modules.Args) pgConn {
	return pgConn{user: a.Get("db_user"), host: a.Get("db_host"), port: a.Get("db_port"), db: a.Get("dbname"),
		password: a.Get("db_password"), runas: a.Get("user")}
}

// postgresVirtual is the postgres module's __virtual__: it loads only
// where psql is found (salt.utils.path.which, then postgres.bins_dir).
func postgresVirtual(env *modules.Env) error {
	return postgresVirtualIn(env, os.Getenv("PATH"), saltWhichDirs)
}

// postgresVirtualIn is postgresVirtual searching the PATH value path and
// the extra directories which adds.
func postgresVirtualIn(env *modules.Env, path string, extra []string) error {
	if saltWhichIn("psql", path, extra) != "" {
		return nil
	}
	c := &modules.Call{Fun: "postgres.__virtual__", Env: env}
	if dir := cmdOptStr(configOptionValue(c, "postgres.bins_dir", "")); dir != "" {
		if saltWhichIn(filepath.Join(dir, "psql"), path, extra) != "" {
			return nil
		}
	}
	return ErrPsqlNotFound
}

// ErrPsqlNotFound is the reason the postgres module does not load (Salt's
// __virtual__ text).
var ErrPsqlNotFound = errors.New("psql was not found")

// pgBinary is _find_pg_binary: util on PATH, else in postgres.bins_dir.
func pgBinary(c *modules.Call, util string) string {
	if p, err := exec.LookPath(util); err == nil {
		return p
	}
	if dir := cmdOptStr(configOptionValue(c, "postgres.bins_dir", "")); dir != "" {
		if p, err := exec.LookPath(filepath.Join(dir, util)); err == nil {
			return p
		}
	}
	return ""
}

// pgCmd is _psql_cmd: the psql command line with the connection defaults
// (postgres.user/host/port/maintenance_db options) filled in.
func pgCmd(c *modules.Call, conn pgConn, args ...string) []string {
	opt := func(v any, key string) any {
		if !payload.Truthy(v) {
			return configOptionValue(c, key, "")
		}
		return v
	}
	usr, host, port, db := opt(conn.user, "postgres.user"), opt(conn.host, "postgres.host"), opt(conn.port, "postgres.port"), opt(conn.db, "postgres.maintenance_db")
	cmd := []string{pgBinary(c, "psql"), "--no-align", "--no-readline", "--no-psqlrc", "--no-password"}
	if payload.Truthy(usr) {
		cmd = append(cmd, "--username", pyfmt.Str(usr))
	}
	if payload.Truthy(host) {
		cmd = append(cmd, "--host", pyfmt.Str(host))
	}
	if payload.Truthy(port) {
		cmd = append(cmd, "--port", pyfmt.Str(port))
	}
	if !payload.Truthy(db) {
		db = "postgres"
	}
	cmd = append(cmd, "--dbname", pyfmt.Str(db))
	return append(cmd, args...)
}

// pgDefaultRunas is the system user Salt runs psql as when runas is not
// given and the server is reached over a unix socket.
func pgDefaultRunas(c *modules.Call) string {
	if c.Env != nil && c.Env.Grains != nil {
		if g, ok := c.Env.Grains.Get("os_family"); ok && strings.Contains(pyfmt.Str(g), "OpenBSD") {
			return "_postgresql"
		}
	}
	return "postgres"
}

// pgRun is _run_psql: cmd.run_all of cmd as the runas user (postgres for
// a local socket when runas is not given) with a PGPASSFILE holding the
// password (the postgres.pass option when none is given).
func pgRun(ctx context.Context, c *modules.Call, cmd []string, conn pgConn) (*cmdOutcome, error) {
	log := c.Log()
	runas, host, usr := conn.runas, conn.host, conn.user
	if runas == nil {
		if !payload.Truthy(host) {
			host = configOptionValue(c, "postgres.host", "")
		}
		if h := cmdOptStr(host); h == "" || strings.HasPrefix(h, "/") {
			runas = pgDefaultRunas(c)
		}
	}
	if usr == nil {
		usr = runas
	}
	password := conn.password
	if password == nil {
		password = configOptionValue(c, "postgres.pass", "")
	}
	var env *payload.Map
	if password != nil {
		pgHost := "localhost"
		if h := cmdOptStr(host); h != "" && !strings.HasPrefix(h, "/") {
			pgHost = h
		}
		port, u := "*", "*"
		if payload.Truthy(conn.port) {
			port = pyfmt.Str(conn.port)
		}
		if payload.Truthy(usr) {
			u = pyfmt.Str(usr)
		}
		f, err := os.CreateTemp("", "gsalt-pgpass-")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		name := f.Name()
		defer func() {
			if err := os.Remove(name); err != nil {
				log.Warn("Remove PGPASSFILE failed")
			}
		}()
		_, werr := fmt.Fprintf(f, "%s:%s:*:%s:%s", pgHost, port, u, pyfmt.Str(password))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, werr)
		}
		if r := cmdOptStr(runas); r != "" {
			if pw, err := user.Lookup(r); err == nil {
				uid, _ := strconv.Atoi(pw.Uid)
				if err := os.Chown(name, uid, -1); err != nil {
					log.Warn(fmt.Sprintf("Failed to chown %s to %s: %v", name, r, err))
				}
			}
		}
		env = payload.NewMap("PGPASSFILE", name)
	}
	argv := make([]any, len(cmd))
	for i, s := range cmd {
		argv[i] = s
	}
	var timeout any
	if t := configOptionValue(c, "postgres.timeout", int64(0)); payload.Truthy(t) {
		timeout = t
	}
	req := cmdRequest{cmd: argv, runas: cmdOptStr(runas), shell: "/bin/sh", pythonShell: false, cleanEnv: true,
		rstrip: true, loglevel: "debug", timeout: timeout}
	if env != nil {
		req.env = env
	}
	out, err := cmdRunCore(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if !cmdRetcodeZero(out.retcode) {
		log.Error("Error connecting to Postgresql server")
	}
	return out, nil
}

// pgRunCmd is _psql_prepare_and_run.
func pgRunCmd(ctx context.Context, c *modules.Call, conn pgConn, args ...string) (*cmdOutcome, error) {
	return pgRun(ctx, c, pgCmd(c, conn, args...), conn)
}

// pgOK runs a statement and reports retcode == 0.
func pgOK(ctx context.Context, c *modules.Call, conn pgConn, query string) (bool, error) {
	out, err := pgRunCmd(ctx, c, conn, "-c", query)
	if err != nil {
		return false, err
	}
	return cmdRetcodeZero(out.retcode), nil
}

// pgVersion is version: the first line of the server_version setting, or
// nil when psql printed nothing.
func pgVersion(ctx context.Context, c *modules.Call, conn pgConn) (any, error) {
	out, err := pgRun(ctx, c, pgCmd(c, conn, "-c", "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'server_version'", "-t"), conn)
	if err != nil {
		return nil, err
	}
	if out.stdout == "" {
		return nil, nil
	}
	line, _, _ := strings.Cut(out.stdout, "\n")
	return line, nil
}

// pgQuery is psql_query: the rows of query as ordered maps of strings
// (an empty list when psql fails).
func pgQuery(ctx context.Context, c *modules.Call, conn pgConn, query string, write bool) ([]*payload.Map, error) {
	q := fmt.Sprintf("COPY (%s) TO STDOUT WITH CSV HEADER", strings.TrimRight(strings.TrimSpace(query), ";"))
	if write {
		q = fmt.Sprintf("START TRANSACTION READ WRITE; %s; COMMIT TRANSACTION;", q)
	}
	out, err := pgRunCmd(ctx, c, conn, "-v", "datestyle=ISO,MDY", "-c", q)
	if err != nil {
		return nil, err
	}
	rows := []*payload.Map{}
	if n, ok := payload.AsInt(out.retcode); ok && n > 0 {
		return rows, nil
	}
	r := csv.NewReader(strings.NewReader(out.stdout))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var header []string
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		if len(rec) == 0 || (len(rec) == 1 && rec[0] == "") {
			continue
		}
		if header == nil {
			header = rec
			continue
		}
		m := &payload.Map{}
		for i := 0; i < len(header) && i < len(rec); i++ {
			m.Set(header[i], rec[i])
		}
		rows = append(rows, m)
	}
	if write && len(rows) > 0 {
		rows = rows[:len(rows)-1]
	}
	return rows, nil
}

func pgRowsAny(rows []*payload.Map) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

func pgStr(m *payload.Map, key string) string {
	v, _ := m.Get(key)
	return pyfmt.Str(v)
}

// pgByKey is {row[key]: row without key} (db_list, tablespace_list).
func pgByKey(rows []*payload.Map, key string) *payload.Map {
	out := &payload.Map{}
	for _, r := range rows {
		k := pgStr(r, key)
		r.Delete(key)
		out.Set(k, r)
	}
	return out
}

// pgQuoteDDL is _quote_ddl_value.
func pgQuoteDDL(v any, quote string) (any, error) {
	if v == nil {
		return nil, nil
	}
	s := pyfmt.Str(v)
	if strings.Contains(s, quote) {
		return nil, fmt.Errorf("%w: Unsupported character %s in value: %s", modules.ErrInvocation, quote, s)
	}
	return quote + s + quote, nil
}

// pgLooseVersion splits a version the way LooseVersion does: runs of
// digits (as numbers) and runs of other non-dot characters.
func pgLooseVersion(s string) []any {
	var out []any
	for _, m := range regexp.MustCompile(`(\d+|[a-z]+|\.)`).FindAllString(strings.ToLower(s), -1) {
		if m == "." {
			continue
		}
		if n, err := strconv.Atoi(m); err == nil {
			out = append(out, n)
		} else {
			out = append(out, m)
		}
	}
	return out
}

// pgVersionLess is LooseVersion(a) < LooseVersion(b) (numbers sort before
// words where Python would refuse to compare them).
func pgVersionLess(a, b string) bool {
	pa, pb := pgLooseVersion(a), pgLooseVersion(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, xn := pa[i].(int)
		y, yn := pb[i].(int)
		switch {
		case xn && yn:
			if x != y {
				return x < y
			}
		case xn != yn:
			return xn
		default:
			if xs, ys := pa[i].(string), pb[i].(string); xs != ys {
				return xs < ys
			}
		}
	}
	return len(pa) < len(pb)
}

// pgUserList is user_list; nil (False) when the server's version cannot be read.
func pgUserList(ctx context.Context, c *modules.Call, conn pgConn, returnPassword bool) (*payload.Map, error) {
	ver, err := pgVersion(ctx, c, conn)
	if err != nil {
		return nil, err
	}
	if ver == nil || pyfmt.Str(ver) == "" {
		c.Log().Warn("Attempt to parse version of Postgres server failed. Is the server responding?")
		c.Log().Error("Could not retrieve Postgres version. Is Postgresql server running?")
		return nil, nil
	}
	replication, catupdate := "pg_roles.rolreplication", "NULL"
	if pgVersionLess(pyfmt.Str(ver), "9.1") {
		replication = "NULL"
	}
	if pgVersionLess(pyfmt.Str(ver), "9.5") {
		catupdate = "pg_roles.rolcatupdate"
	}
	x := func(s string) string {
		if returnPassword {
			return s
		}
		return ""
	}
	query := `SELECT pg_roles.rolname as "name",pg_roles.rolsuper as "superuser",` +
		` pg_roles.rolinherit as "inherits privileges", pg_roles.rolcreaterole as` +
		` "can create roles", pg_roles.rolcreatedb as "can create databases", ` + catupdate +
		` as "can update system catalogs", pg_roles.rolcanlogin as "can login", ` + replication +
		` as "replication", pg_roles.rolconnlimit as "connections", (SELECT` +
		" array_agg(pg_roles2.rolname)    FROM pg_catalog.pg_auth_members    JOIN" +
		" pg_catalog.pg_roles pg_roles2 ON (pg_auth_members.roleid = pg_roles2.oid)" +
		"    WHERE pg_auth_members.member = pg_roles.oid) as" +
		` "groups",pg_roles.rolvaliduntil::timestamp(0) as "expiry time",` +
		` pg_roles.rolconfig  as "defaults variables" ` +
		x(`, COALESCE(pg_shadow.passwd, pg_authid.rolpassword) as "password" `) +
		"FROM pg_roles " +
		x("LEFT JOIN pg_authid ON pg_roles.oid = pg_authid.oid ") +
		x("LEFT JOIN pg_shadow ON pg_roles.oid = pg_shadow.usesysid")
	rows, err := pgQuery(ctx, c, conn, query, false)
	if err != nil {
		return nil, err
	}
	out := &payload.Map{}
	for _, row := range rows {
		r := &payload.Map{}
		for _, k := range []string{"superuser", "inherits privileges", "can create roles", "can create databases",
			"can update system catalogs", "can login", "replication", "connections"} {
			switch pgStr(row, k) {
			case "t":
				r.Set(k, true)
			case "f":
				r.Set(k, false)
			default:
				r.Set(k, nil)
			}
		}
		if ts, ok := PostgresTimestamp(pgStr(row, "expiry time")); ok {
			r.Set("expiry time", ts)
		} else {
			r.Set("expiry time", nil)
		}
		dv, _ := row.Get("defaults variables")
		r.Set("defaults variables", dv)
		if returnPassword {
			pw, _ := row.Get("password")
			r.Set("password", pw)
		}
		r.Set("groups", pgCSVLine(strings.Trim(pgStr(row, "groups"), "{}")))
		out.Set(pgStr(row, "name"), r)
	}
	return out, nil
}

// PostgresTimestamp parses a "%Y-%m-%d %H:%M:%S" timestamp into the
// naive datetime Salt returns for "expiry time" (a time.Time in UTC, which
// travels as msgpack ext 78 like Salt's datetime).
func PostgresTimestamp(s string) (time.Time, bool) {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// pgCSVLine is list(csv.reader([s]))[0].
func pgCSVLine(s string) []any {
	out := []any{}
	if s == "" {
		return out
	}
	r := csv.NewReader(strings.NewReader(s))
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if err != nil {
		return out
	}
	for _, f := range rec {
		out = append(out, f)
	}
	return out
}

// pgRoleGet is role_get: the role's user_list entry or nil.
func pgRoleGet(ctx context.Context, c *modules.Call, conn pgConn, name string, returnPassword bool) (*payload.Map, error) {
	all, err := pgUserList(ctx, c, conn, returnPassword)
	if err != nil {
		return nil, err
	}
	if all == nil {
		c.Log().Error("Could not retrieve Postgres role. Is Postgres running?")
		return nil, nil
	}
	v, _ := all.Get(name)
	m, _ := v.(*payload.Map)
	return m, nil
}

func pgUserExists(ctx context.Context, c *modules.Call, conn pgConn, name string) (bool, error) {
	r, err := pgRoleGet(ctx, c, conn, name, false)
	return r != nil && r.Len() > 0, err
}

// PostgresMD5 is _md5_password.
func PostgresMD5(role, password string) string {
	sum := md5.Sum([]byte(password + role)) //nolint:gosec // the verifier format
	return fmt.Sprintf("md5%x", sum)
}

// PostgresScram is _scram_sha_256 (salt nil: 16 random bytes).
func PostgresScram(password string, salt []byte, iterations int) (string, error) {
	if salt == nil {
		salt = make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return "", err
		}
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
	if err != nil {
		return "", err
	}
	mac := func(msg string) []byte {
		h := hmac.New(sha256.New, salted)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac("Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac("Server Key"))), nil
}

// pgEncryption normalises an encrypted argument: "md5", "scram-sha-256",
// false (plain) or an error for anything else.
func pgEncryption(encrypted any) (any, error) {
	switch e := encrypted.(type) {
	case nil:
		return PostgresDefaultEncryption, nil
	case bool:
		if e {
			return "md5", nil
		}
		return false, nil
	case string:
		if e == "md5" || e == "scram-sha-256" {
			return e, nil
		}
	}
	return nil, &modules.PyException{Class: "ValueError", Message: "Unknown password algorithm: " + pyfmt.Str(encrypted)}
}

// PostgresMaybeEncrypt is _maybe_encrypt_password: nil for a nil
// password, else the verifier PostgreSQL stores for the algorithm.
func PostgresMaybeEncrypt(log interface{ Warn(string, ...any) }, role string, password, encrypted any) (any, error) {
	if password == nil {
		return nil, nil
	}
	pw := pyfmt.Str(password)
	enc, err := pgEncryption(encrypted)
	if err != nil {
		return nil, err
	}
	switch {
	case enc == "scram-sha-256" && !strings.HasPrefix(pw, "SCRAM-SHA-256"):
		return PostgresScram(pw, nil, 4096)
	case enc == "md5" && !strings.HasPrefix(pw, "md5"):
		log.Warn("The md5 password algorithm was deprecated in PostgreSQL 10")
		return PostgresMD5(role, pw), nil
	case enc == false:
		log.Warn("Unencrypted passwords were removed in PostgreSQL 10")
	}
	return pw, nil
}

var pgScramRe = regexp.MustCompile(`^SCRAM-SHA-256\$(\d+):([^$]+?)\$`)

// PostgresVerifyPassword is _verify_password: whether password (or a
// verifier) matches the stored verifier for the method.
func PostgresVerifyPassword(role string, password, verifier, method any) bool {
	pw, ver := pyfmt.Str(password), verifier
	var expected any
	switch {
	case method == "md5" || method == true:
		if strings.HasPrefix(pw, "md5") {
			expected = pw
		} else {
			expected = PostgresMD5(role, pw)
		}
	case method == "scram-sha-256":
		if strings.HasPrefix(pw, "SCRAM-SHA-256") {
			expected = pw
		} else if m := pgScramRe.FindStringSubmatch(pyfmt.Str(ver)); m != nil && ver != nil {
			it, _ := strconv.Atoi(m[1])
			salt, err := base64.StdEncoding.DecodeString(m[2])
			if err != nil {
				return false
			}
			s, err := PostgresScram(pw, salt, it)
			if err != nil {
				return false
			}
			expected = s
		} else {
			return false
		}
	case method == false:
		expected = pw
	default:
		return false
	}
	s, ok := ver.(string)
	return ok && s == expected
}

// pgRoleFlag is _add_role_flag.
func pgRoleFlag(s string, test any, flag string, cond any, prefix, addtxt string, skip bool) string {
	if skip {
		return s
	}
	if cond == nil {
		cond = test
	}
	if test != nil {
		if payload.Truthy(cond) {
			s += " " + flag
		} else {
			s += " " + prefix + flag
		}
	}
	if addtxt != "" {
		s += " " + addtxt
	}
	return s
}

// pgRoleOpts are _role_cmd_args's arguments.
type pgRoleOpts struct {
	typ                                                                    string
	encrypted, login, connlimit, inherit, createdb, createroles, superuser any
	groups, replication, rolepassword, validUntil                          any
	dbRole                                                                 *payload.Map
}

// pgRoleArgs is _role_cmd_args.
func pgRoleArgs(c *modules.Call, name string, o pgRoleOpts) (string, error) {
	if o.inherit == nil && (o.typ == "user" || o.typ == "group") {
		o.inherit = true
	}
	if o.login == nil {
		switch o.typ {
		case "user":
			o.login = true
		case "group":
			o.login = false
		}
	}
	if o.encrypted == nil {
		o.encrypted = PostgresDefaultEncryption
	}
	pwStr, isStr := o.rolepassword.(string)
	_, isBool := o.rolepassword.(bool)
	skipPasswd := !((isStr && pwStr != "") || isBool)
	escapedPassword, escapedValid := "", ""
	if isStr && pwStr != "" {
		enc, err := PostgresMaybeEncrypt(c.Log(), name, strings.ReplaceAll(pwStr, "'", "''"), o.encrypted)
		if err != nil {
			return "", err
		}
		escapedPassword = "'" + pyfmt.Str(enc) + "'"
	}
	if s, ok := o.validUntil.(string); ok && s != "" {
		escapedValid = "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	skipSuper := false
	if o.dbRole != nil && o.dbRole.Len() > 0 {
		su, _ := o.dbRole.Get("superuser")
		skipSuper = payload.Truthy(o.superuser) == payload.Truthy(su)
	}
	s := ""
	s = pgRoleFlag(s, o.inherit, "INHERIT", nil, "NO", "", false)
	s = pgRoleFlag(s, o.createdb, "CREATEDB", nil, "NO", "", false)
	s = pgRoleFlag(s, o.createroles, "CREATEROLE", nil, "NO", "", false)
	s = pgRoleFlag(s, o.superuser, "SUPERUSER", nil, "NO", "", skipSuper)
	s = pgRoleFlag(s, o.replication, "REPLICATION", nil, "NO", "", false)
	s = pgRoleFlag(s, o.login, "LOGIN", nil, "NO", "", false)
	s = pgRoleFlag(s, payload.Truthy(o.connlimit), "CONNECTION LIMIT", nil, "NO", pyfmt.Str(o.connlimit), o.connlimit == nil)
	s = pgRoleFlag(s, o.encrypted != nil && payload.Truthy(o.rolepassword), "ENCRYPTED", payload.Truthy(o.encrypted), "UN", "", skipPasswd || isBool)
	s = pgRoleFlag(s, payload.Truthy(o.rolepassword), "PASSWORD", nil, "NO", escapedPassword, skipPasswd)
	s = pgRoleFlag(s, payload.Truthy(o.validUntil), "VALID UNTIL", nil, "NO", escapedValid, o.validUntil == nil)
	if strings.HasSuffix(s, "WITH") {
		s = strings.ReplaceAll(s, " WITH", "")
	}
	if payload.Truthy(o.groups) {
		var gs string
		switch g := o.groups.(type) {
		case []any:
			parts := make([]string, len(g))
			for i, e := range g {
				parts[i] = pyfmt.Str(e)
			}
			gs = strings.Join(parts, ",")
		default:
			gs = pyfmt.Str(g)
		}
		for _, g := range strings.Split(gs, ",") {
			s += fmt.Sprintf(`; GRANT "%s" TO "%s"`, g, name)
		}
	}
	return s, nil
}

func pgRoleOptsOf(a *modules.Args, typ string) pgRoleOpts {
	return pgRoleOpts{typ: typ, encrypted: a.Get("encrypted"), login: a.Get("login"), connlimit: a.Get("connlimit"),
		inherit: a.Get("inherit"), createdb: a.Get("createdb"), createroles: a.Get("createroles"), superuser: a.Get("superuser"),
		groups: a.Get("groups"), replication: a.Get("replication"), rolepassword: a.Get("rolepassword"), validUntil: a.Get("valid_until")}
}

// pgRoleCreate is _role_create.
func pgRoleCreate(ctx context.Context, c *modules.Call, name, typ string) (any, error) {
	conn := pgConnOf(c.Args)
	exists, err := pgUserExists(ctx, c, conn, name)
	if err != nil {
		return nil, err
	}
	if exists {
		c.Log().Info(fmt.Sprintf("%s '%s' already exists", pgCapitalize(typ), name))
		return false, nil
	}
	args, err := pgRoleArgs(c, name, pgRoleOptsOf(c.Args, typ))
	if err != nil {
		return nil, err
	}
	return pgOK(ctx, c, conn, fmt.Sprintf(`CREATE ROLE "%s" WITH %s`, name, args))
}

// pgRoleUpdate is _role_update.
func pgRoleUpdate(ctx context.Context, c *modules.Call, name, typ string) (any, error) {
	conn := pgConnOf(c.Args)
	role, err := pgRoleGet(ctx, c, conn, name, false)
	if err != nil {
		return nil, err
	}
	if role == nil || role.Len() == 0 {
		c.Log().Info(fmt.Sprintf("%s '%s' could not be found", pgCapitalize(typ), name))
		return false, nil
	}
	o := pgRoleOptsOf(c.Args, "role")
	o.dbRole = role
	args, err := pgRoleArgs(c, name, o)
	if err != nil {
		return nil, err
	}
	return pgOK(ctx, c, conn, fmt.Sprintf(`ALTER ROLE "%s" WITH %s`, name, args))
}

// pgRoleRemove is _role_remove.
func pgRoleRemove(ctx context.Context, c *modules.Call, name string) (any, error) {
	conn := pgConnOf(c.Args)
	exists, err := pgUserExists(ctx, c, conn, name)
	if err != nil {
		return nil, err
	}
	if !exists {
		c.Log().Info(fmt.Sprintf("User '%s' does not exist", name))
		return false, nil
	}
	if _, err := pgRunCmd(ctx, c, conn, "-c", fmt.Sprintf(`DROP ROLE "%s"`, name)); err != nil {
		return nil, err
	}
	exists, err = pgUserExists(ctx, c, conn, name)
	if err != nil {
		return nil, err
	}
	if exists {
		c.Log().Info(fmt.Sprintf("Failed to delete user '%s'.", name))
		return false, nil
	}
	return true, nil
}

func pgCapitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// pgExtensions is available_extensions / installed_extensions: rows keyed
// by nameKey, kept when they have both nameKey and verKey.
func pgExtensions(ctx context.Context, c *modules.Call, conn pgConn, installed bool) (*payload.Map, error) {
	query, nameKey, verKey := "select * from pg_available_extensions();", "name", "default_version"
	if installed {
		query, nameKey, verKey = "select a.*, b.nspname as schema_name from pg_extension a,  pg_namespace b where a.extnamespace = b.oid;", "extname", "extversion"
	}
	rows, err := pgQuery(ctx, c, conn, query, false)
	if err != nil {
		return nil, err
	}
	out := &payload.Map{}
	for _, r := range rows {
		_, hasV := r.Get(verKey)
		if _, hasN := r.Get(nameKey); hasV && hasN {
			out.Set(pgStr(r, nameKey), r)
		}
	}
	return out, nil
}

func pgInstalledExt(ctx context.Context, c *modules.Call, conn pgConn, name string) (*payload.Map, error) {
	exts, err := pgExtensions(ctx, c, conn, true)
	if err != nil {
		return nil, err
	}
	v, _ := exts.Get(name)
	m, _ := v.(*payload.Map)
	return m, nil
}

func pgIsAvailableExt(ctx context.Context, c *modules.Call, conn pgConn, name string) (bool, error) {
	exts, err := pgExtensions(ctx, c, conn, false)
	if err != nil {
		return false, err
	}
	for _, k := range exts.Keys() {
		if strings.EqualFold(k, name) {
			return true, nil
		}
	}
	return false, nil
}

// pgCreateMetadata is create_metadata.
func pgCreateMetadata(ctx context.Context, c *modules.Call, conn pgConn, name string, extVersion, schema any) ([]any, error) {
	inst, err := pgInstalledExt(ctx, c, conn, name)
	if err != nil {
		return nil, err
	}
	if inst == nil || inst.Len() == 0 {
		return []any{PostgresExtNotInstalled}, nil
	}
	ret := []any{PostgresExtInstalled}
	if extVersion != nil {
		cur := pyfmt.Str(extVersion)
		if v, ok := inst.Get("extversion"); ok {
			cur = pyfmt.Str(v)
		}
		if pgVersionLess(cur, pyfmt.Str(extVersion)) {
			ret = append(ret, PostgresExtToUpgrade)
		}
	}
	if schema != nil {
		reloc := "f"
		if v, ok := inst.Get("extrelocatable"); ok {
			reloc = pyfmt.Str(v)
		}
		sch := pyfmt.Str(schema)
		if v, ok := inst.Get("schema_name"); ok {
			sch = pyfmt.Str(v)
		}
		if reloc == "t" && sch != pyfmt.Str(schema) {
			ret = append(ret, PostgresExtToMove)
		}
	}
	return ret, nil
}

// pgSchemaList is schema_list.
func pgSchemaList(ctx context.Context, c *modules.Call, conn pgConn) (*payload.Map, error) {
	query := `SELECT pg_namespace.nspname as "name",pg_namespace.nspacl as "acl", pg_roles.rolname as "owner" ` +
		"FROM pg_namespace LEFT JOIN pg_roles ON pg_roles.oid = pg_namespace.nspowner "
	rows, err := pgQuery(ctx, c, conn, query, false)
	if err != nil {
		return nil, err
	}
	out := &payload.Map{}
	for _, r := range rows {
		owner, _ := r.Get("owner")
		acl, _ := r.Get("acl")
		out.Set(pgStr(r, "name"), payload.NewMap("owner", owner, "acl", acl))
	}
	return out, nil
}

func pgSchemaGet(ctx context.Context, c *modules.Call, conn pgConn, name string) (any, error) {
	all, err := pgSchemaList(ctx, c, conn)
	if err != nil {
		return nil, err
	}
	v, _ := all.Get(name)
	return v, nil
}

// pgLanguages is language_list.
func pgLanguages(ctx context.Context, c *modules.Call, conn pgConn) (*payload.Map, error) {
	rows, err := pgQuery(ctx, c, conn, `SELECT lanname AS "Name" FROM pg_language`, false)
	if err != nil {
		return nil, err
	}
	out := &payload.Map{}
	for _, r := range rows {
		out.Set(pgStr(r, "Name"), pgStr(r, "Name"))
	}
	return out, nil
}

// pgPrivilegesQuery is _make_privileges_list_query.
func pgPrivilegesQuery(name, objectType, prepend string) string {
	switch objectType {
	case "table", "sequence":
		kind := "relkind in ('r', 'v')"
		if objectType == "sequence" {
			kind = "relkind = 'S'"
		}
		return fmt.Sprintf("SELECT relacl AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE nspname = '%s' AND relname = '%s' AND %s ORDER BY relname", prepend, name, kind)
	case "schema":
		return fmt.Sprintf("SELECT nspacl AS name FROM pg_catalog.pg_namespace WHERE nspname = '%s' ORDER BY nspname", name)
	case "function":
		return fmt.Sprintf("SELECT proacl AS name FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE nspname = '%s' AND p.oid::regprocedure::text = '%s' ORDER BY proname, proargtypes", prepend, name)
	case "tablespace":
		return fmt.Sprintf("SELECT spcacl AS name FROM pg_catalog.pg_tablespace WHERE spcname = '%s' ORDER BY spcname", name)
	case "language":
		return fmt.Sprintf("SELECT lanacl AS name FROM pg_catalog.pg_language WHERE lanname = '%s' ORDER BY lanname", name)
	case "database":
		return fmt.Sprintf("SELECT datacl AS name FROM pg_catalog.pg_database WHERE datname = '%s' ORDER BY datname", name)
	case "group":
		return fmt.Sprintf("SELECT rolname, admin_option FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles r ON m.member=r.oid WHERE m.roleid IN (SELECT oid FROM pg_catalog.pg_roles WHERE rolname='%s') ORDER BY rolname", name)
	}
	return ""
}

// pgOwnerQuery is _get_object_owner's query.
func pgOwnerQuery(name, objectType, prepend string) string {
	switch objectType {
	case "table":
		return fmt.Sprintf("SELECT tableowner AS name FROM pg_tables WHERE schemaname = '%s' AND tablename = '%s'", prepend, name)
	case "sequence":
		return fmt.Sprintf("SELECT rolname AS name FROM pg_catalog.pg_class c JOIN pg_roles r ON c.relowner = r.oid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE relkind='S' AND nspname='%s' AND relname = '%s'", prepend, name)
	case "schema":
		return fmt.Sprintf("SELECT rolname AS name FROM pg_namespace n JOIN pg_roles r ON n.nspowner = r.oid WHERE nspname = '%s'", name)
	case "function":
		return fmt.Sprintf("SELECT rolname AS name FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace JOIN pg_catalog.pg_roles r ON p.proowner = r.oid WHERE nspname = '%s' AND p.oid::regprocedure::text = '%s' ORDER BY proname, proargtypes", prepend, name)
	case "tablespace":
		return fmt.Sprintf("SELECT rolname AS name FROM pg_tablespace t JOIN pg_roles r ON t.spcowner = r.oid WHERE spcname = '%s'", name)
	case "language":
		return fmt.Sprintf("SELECT rolname AS name FROM pg_language l JOIN pg_roles r ON l.lanowner = r.oid WHERE lanname = '%s'", name)
	case "database":
		return fmt.Sprintf("SELECT rolname AS name FROM pg_database d JOIN pg_roles r ON d.datdba = r.oid WHERE datname = '%s'", name)
	}
	return ""
}

var pgPrivSplit = regexp.MustCompile(`\s?,\s?`)

// pgPrivOpts is _mod_priv_opts + _validate_privileges.
func pgPrivOpts(objectType, privileges any) (string, string, []string, error) {
	ot := strings.ToLower(pyfmt.Str(objectType))
	privs := ""
	if privileges != nil {
		privs = pyfmt.Str(privileges)
	}
	list := pgPrivSplit.Split(strings.ToUpper(privs), -1)
	if ot != "group" {
		types, ok := pgPrivilegeTypeMap[ot]
		if !ok {
			return "", "", nil, &modules.PyException{Class: "KeyError", Message: "'" + ot + "'"}
		}
		allowed := map[string]bool{"ALL": true}
		for i := 0; i < len(types); i++ {
			allowed[pgPrivilegesMap[types[i]]] = true
		}
		for _, p := range list {
			if !allowed[p] {
				return "", "", nil, fmt.Errorf("%w: Invalid privilege(s): %s provided for object %s", modules.ErrInvocation, privs, ot)
			}
		}
	} else if privs != "" {
		return "", "", nil, fmt.Errorf("%w: The privileges option should not be set for object_type group", modules.ErrInvocation)
	}
	return ot, privs, list, nil
}

// pgPrivilegesList is privileges_list.
func pgPrivilegesList(ctx context.Context, c *modules.Call, conn pgConn, name, objectType, prepend string) (*payload.Map, error) {
	objectType = strings.ToLower(objectType)
	if !pgPrivilegeObjects[objectType] {
		// Salt's query builder leaves its result unset for other types.
		return nil, &modules.PyException{Class: "UnboundLocalError", Message: "cannot access local variable 'query' where it is not associated with a value"}
	}
	rows, err := pgQuery(ctx, c, conn, pgPrivilegesQuery(name, objectType, prepend), false)
	if err != nil {
		return nil, err
	}
	out := &payload.Map{}
	for _, row := range rows {
		if objectType == "group" {
			out.Set(pgStr(row, "rolname"), pgStr(row, "admin_option") == "t")
			continue
		}
		acl := strings.Trim(pgStr(row, "name"), "{}")
		for _, part := range strings.Split(acl, ",") {
			permsPart, _, ok := strings.Cut(part, "/")
			if !ok {
				continue
			}
			role, perms, ok := strings.Cut(permsPart, "=")
			if !ok {
				continue
			}
			if role == "" {
				role = "public"
			}
			tmp := &payload.Map{}
			prev := ""
			for i := 0; i < len(perms); i++ {
				p, known := pgPrivilegesMap[perms[i]]
				if !known {
					continue
				}
				if perms[i] == '*' && prev != "" {
					tmp.Set(prev, true)
					continue
				}
				tmp.Set(p, false)
				prev = p
			}
			out.Set(role, tmp)
		}
	}
	return out, nil
}

// pgHasPrivileges is has_privileges.
func pgHasPrivileges(ctx context.Context, c *modules.Call, conn pgConn, name, objectName string, objectType, privileges, grantOption any, prepend string) (bool, error) {
	ot, _, privs, err := pgPrivOpts(objectType, privileges)
	if err != nil {
		return false, err
	}
	if ot != "group" {
		rows, err := pgQuery(ctx, c, conn, pgOwnerQuery(objectName, ot, prepend), false)
		if err != nil {
			return false, err
		}
		if len(rows) > 0 {
			if _, ok := rows[0].Get("name"); ok && pgStr(rows[0], "name") == name {
				return true, nil
			}
		}
	}
	list, err := pgPrivilegesList(ctx, c, conn, objectName, ot, prepend)
	if err != nil {
		return false, err
	}
	v, ok := list.Get(name)
	if !ok {
		return false, nil
	}
	if ot == "group" {
		if payload.Truthy(grantOption) {
			return v == true, nil
		}
		return true, nil
	}
	have, _ := v.(*payload.Map)
	if have == nil {
		return false, nil
	}
	types := pgPrivilegeTypeMap[ot]
	var perms []string
	for i := 0; i < len(types); i++ {
		perms = append(perms, pgPrivilegesMap[types[i]])
	}
	if payload.Truthy(grantOption) {
		if have.Len() != len(perms) {
			return false, nil
		}
		for _, p := range perms {
			if g, ok := have.Get(p); !ok || g != true {
				return false, nil
			}
		}
		return true, nil
	}
	if slices.Contains(privs, "ALL") {
		keys := have.Keys()
		sort.Strings(keys)
		sort.Strings(perms)
		return slices.Equal(keys, perms), nil
	}
	for _, p := range privs {
		if _, ok := have.Get(p); !ok {
			return false, nil
		}
	}
	return true, nil
}

// pgDatadirExists is datadir_exists.
func pgDatadirExists(name string) bool {
	for _, f := range []string{"PG_VERSION", "postgresql.conf"} {
		st, err := os.Stat(filepath.Join(name, f))
		if err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// pgInitdb is _run_initdb.
func pgInitdb(ctx context.Context, c *modules.Call) (*cmdOutcome, error) {
	a := c.Args
	runas := cmdOptStr(a.Get("runas"))
	if runas == "" {
		runas = pgDefaultRunas(c)
	}
	usr := cmdOptStr(a.Get("user"))
	if a.Get("user") == nil {
		usr = runas
	}
	bin := pgBinary(c, "initdb")
	if bin == "" {
		return nil, fmt.Errorf("%w: initdb executable not found.", modules.ErrExecution)
	}
	cmd := []string{bin, "--pgdata=" + a.Str("name"), "--username=" + usr, "--auth=" + pyfmt.Str(a.Get("auth")), "--encoding=" + pyfmt.Str(a.Get("encoding"))}
	if v := a.Get("locale"); v != nil {
		cmd = append(cmd, "--locale="+pyfmt.Str(v))
	}
	if v := a.Get("waldir"); v != nil {
		cmd = append(cmd, "-X", pyfmt.Str(v))
	}
	if payload.Truthy(a.Get("checksums")) {
		cmd = append(cmd, "--data-checksums")
	}
	if pw := a.Get("password"); pw != nil {
		f, err := os.CreateTemp("", "gsalt-pwfile-")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		defer func() {
			if err := os.Remove(f.Name()); err != nil {
				c.Log().Warn("Removal of PGPASSFILE failed")
			}
		}()
		_, werr := f.WriteString(pyfmt.Str(pw))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, werr)
		}
		if u, err := user.Lookup(runas); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			_ = os.Chown(f.Name(), uid, -1)
		}
		cmd = append(cmd, "--pwfile="+f.Name())
	}
	quoted := make([]string, len(cmd))
	for i, s := range cmd {
		quoted[i] = py.ShlexQuote(s)
	}
	var timeout any
	if t := configOptionValue(c, "postgres.timeout", int64(0)); payload.Truthy(t) {
		timeout = t
	}
	out, err := cmdRunCore(ctx, c, cmdRequest{cmd: strings.Join(quoted, " "), runas: runas, shell: "/bin/sh", pythonShell: false,
		cleanEnv: true, rstrip: true, loglevel: "debug", timeout: timeout, resetLocale: true})
	if err != nil {
		return nil, err
	}
	if !cmdRetcodeZero(out.retcode) {
		c.Log().Error("Error initilizing the postgres data directory")
	}
	return out, nil
}

func postgresFunctions() []modules.Function {
	conn6 := []modules.Param{opt("user", nil), opt("host", nil), opt("port", nil), opt("maintenance_db", nil), opt("password", nil), opt("runas", nil)}
	with := func(pre []modules.Param, post ...modules.Param) modules.Spec {
		ps := append(append([]modules.Param{}, pre...), post...)
		return modules.Spec{Params: ps}
	}
	cat := func(ps ...[]modules.Param) []modules.Param {
		var out []modules.Param
		for _, p := range ps {
			out = append(out, p...)
		}
		return out
	}
	conn5 := conn6[:5]
	runas := opt("runas", nil)
	schemaArgs := []modules.Param{req("dbname"), req("name"), opt("user", nil), opt("db_user", nil), opt("db_password", nil), opt("db_host", nil), opt("db_port", nil)}
	langArgs := []modules.Param{req("name"), req("maintenance_db"), opt("user", nil), opt("host", nil), opt("port", nil), opt("password", nil), runas}
	langConn := func(a *modules.Args) pgConn {
		return pgConn{user: a.Get("user"), host: a.Get("host"), port: a.Get("port"), db: a.Get("maintenance_db"), password: a.Get("password"), runas: a.Get("runas")}
	}
	privTail := []modules.Param{opt("prepend", "public"), opt("maintenance_db", nil), opt("user", nil), opt("host", nil), opt("port", nil), opt("password", nil), runas}
	privConn := langConn
	name := func(c *modules.Call, key string) string { return pyfmt.Str(c.Args.Get(key)) }
	roleCreateParams := cat([]modules.Param{req("username")}, conn5, []modules.Param{opt("createdb", nil), opt("createroles", nil), opt("inherit", nil),
		opt("login", nil), opt("connlimit", nil), opt("encrypted", nil), opt("superuser", nil), opt("replication", nil), opt("rolepassword", nil),
		opt("valid_until", nil), opt("groups", nil), runas})
	roleUpdateParams := cat([]modules.Param{req("username")}, conn5, []modules.Param{opt("createdb", nil), opt("createroles", nil), opt("encrypted", nil),
		opt("superuser", nil), opt("inherit", nil), opt("login", nil), opt("connlimit", nil), opt("replication", nil), opt("rolepassword", nil),
		opt("valid_until", nil), opt("groups", nil), runas})
	groupCreateParams := cat([]modules.Param{req("groupname")}, conn5, []modules.Param{opt("createdb", nil), opt("createroles", nil), opt("encrypted", nil),
		opt("login", nil), opt("inherit", nil), opt("superuser", nil), opt("replication", nil), opt("rolepassword", nil), opt("groups", nil), runas})
	groupUpdateParams := cat([]modules.Param{req("groupname")}, conn5, []modules.Param{opt("createdb", nil), opt("createroles", nil), opt("encrypted", nil),
		opt("inherit", nil), opt("login", nil), opt("superuser", nil), opt("replication", nil), opt("rolepassword", nil), opt("groups", nil), runas})
	extGet := func(installed bool) modules.Func {
		return func(ctx context.Context, c *modules.Call) (any, error) {
			exts, err := pgExtensions(ctx, c, pgConnOf(c.Args), installed)
			if err != nil {
				return nil, err
			}
			v, _ := exts.Get(name(c, "name"))
			return v, nil
		}
	}
	return []modules.Function{
		{Name: "postgres.version", Spec: modules.Spec{Params: conn6}, Doc: "Return the version of a Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.version",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pgVersion(ctx, c, pgConnOf(c.Args)) }},
		{Name: "postgres.psql_query", Spec: with(cat([]modules.Param{req("query")}, conn6), opt("write", false)),
			Doc: "Run an SQL-Query and return the results as a list (SELECT statements only).\n\nCLI Example:\n\n    salt '*' postgres.psql_query 'select * from pg_stat_activity'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				rows, err := pgQuery(ctx, c, pgConnOf(c.Args), name(c, "query"), payload.Truthy(c.Args.Get("write")))
				if err != nil {
					return nil, err
				}
				return pgRowsAny(rows), nil
			}},
		{Name: "postgres.db_list", Spec: modules.Spec{Params: conn6}, Doc: "Return dictionary with information about databases of a Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.db_list",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pgDBList(ctx, c, pgConnOf(c.Args)) }},
		{Name: "postgres.db_exists", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Checks if a database exists on the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.db_exists 'dbname'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				dbs, err := pgDBList(ctx, c, pgConnOf(c.Args))
				if err != nil {
					return nil, err
				}
				_, ok := dbs.Get(name(c, "name"))
				return ok, nil
			}},
		{Name: "postgres.db_create", Spec: with(cat([]modules.Param{req("name")}, conn5), opt("tablespace", nil), opt("encoding", nil), opt("lc_collate", nil),
			opt("lc_ctype", nil), opt("owner", nil), opt("template", nil), runas),
			Doc: "Adds a databases to the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.db_create 'dbname'\n\n    salt '*' postgres.db_create 'dbname' template=template_postgis",
			Fn:  pgDBCreate},
		{Name: "postgres.db_alter", Spec: with(cat([]modules.Param{req("name")}, conn5), opt("tablespace", nil), opt("owner", nil), opt("owner_recurse", false), runas),
			Doc: "Change tablespace or/and owner of database.\n\nCLI Example:\n\n    salt '*' postgres.db_alter dbname owner=otheruser",
			Fn:  pgDBAlter},
		{Name: "postgres.db_remove", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Removes a databases from the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.db_remove 'dbname'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				n := name(c, "name")
				for _, q := range []string{fmt.Sprintf(`REVOKE CONNECT ON DATABASE "%s" FROM public;`, n),
					fmt.Sprintf("SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s' AND pid <> pg_backend_pid();", n),
					fmt.Sprintf(`DROP DATABASE "%s";`, n)} {
					out, err := pgRunCmd(ctx, c, pgConnOf(c.Args), "-c", q)
					if err != nil {
						return nil, err
					}
					if !cmdRetcodeZero(out.retcode) {
						return nil, &modules.PyException{Class: "Exception", Message: "Failed: ret=" + pyfmt.Repr(out.toMap())}
					}
				}
				return true, nil
			}},
		{Name: "postgres.tablespace_list", Spec: modules.Spec{Params: conn6}, Doc: "Return dictionary with information about tablespaces of a Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.tablespace_list",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgTablespaces(ctx, c, pgConnOf(c.Args))
			}},
		{Name: "postgres.tablespace_exists", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Checks if a tablespace exists on the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.tablespace_exists 'dbname'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ts, err := pgTablespaces(ctx, c, pgConnOf(c.Args))
				if err != nil {
					return nil, err
				}
				_, ok := ts.Get(name(c, "name"))
				return ok, nil
			}},
		{Name: "postgres.tablespace_create", Spec: with([]modules.Param{req("name"), req("location"), opt("options", nil), opt("owner", nil)}, conn6...),
			Doc: "Adds a tablespace to the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.tablespace_create tablespacename '/path/datadir'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ownerQ, optsQ := "", ""
				if o := c.Args.Get("owner"); payload.Truthy(o) {
					ownerQ = fmt.Sprintf(`OWNER "%s"`, pyfmt.Str(o))
				}
				if o, ok := c.Args.Get("options").(*payload.Map); ok && o.Len() > 0 {
					var parts []string
					for _, it := range o.Items() {
						parts = append(parts, fmt.Sprintf("%s = %s", pyfmt.Str(it.Key), pyfmt.Str(it.Value)))
					}
					optsQ = fmt.Sprintf("WITH ( %s )", strings.Join(parts, ", "))
				}
				return pgOK(ctx, c, pgConnOf(c.Args), fmt.Sprintf(`CREATE TABLESPACE "%s" %s LOCATION '%s' %s`, name(c, "name"), ownerQ, name(c, "location"), optsQ))
			}},
		{Name: "postgres.tablespace_alter", Spec: with(cat([]modules.Param{req("name")}, conn5), opt("new_name", nil), opt("new_owner", nil), opt("set_option", nil), opt("reset_option", nil), runas),
			Doc: "Change tablespace name, owner, or options.\n\nCLI Example:\n\n    salt '*' postgres.tablespace_alter tsname new_owner=otheruser",
			Fn:  pgTablespaceAlter},
		{Name: "postgres.tablespace_remove", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Removes a tablespace from the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.tablespace_remove tsname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgOK(ctx, c, pgConnOf(c.Args), fmt.Sprintf(`DROP TABLESPACE "%s"`, name(c, "name")))
			}},
		{Name: "postgres.user_list", Spec: with(conn6, opt("return_password", false)), Doc: "Return a dict with information about users of a Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.user_list",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				m, err := pgUserList(ctx, c, pgConnOf(c.Args), payload.Truthy(c.Args.Get("return_password")))
				if m == nil || err != nil {
					return false, err
				}
				return m, nil
			}},
		{Name: "postgres.role_get", Spec: with(cat([]modules.Param{req("name")}, conn6), opt("return_password", false)),
			Doc: "Return a dict with information about users of a Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.role_get postgres",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				m, err := pgRoleGet(ctx, c, pgConnOf(c.Args), name(c, "name"), payload.Truthy(c.Args.Get("return_password")))
				if m == nil || err != nil {
					return nil, err
				}
				return m, nil
			}},
		{Name: "postgres.user_exists", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Checks if a user exists on the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.user_exists 'username'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgUserExists(ctx, c, pgConnOf(c.Args), name(c, "name"))
			}},
		{Name: "postgres.user_create", Spec: modules.Spec{Params: roleCreateParams}, Doc: "Creates a Postgres user.\n\nCLI Examples:\n\n    salt '*' postgres.user_create 'username' user='user' host='hostname' port='port' password='password' rolepassword='rolepassword' valid_until='valid_until'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgRoleCreate(ctx, c, name(c, "username"), "user")
			}},
		{Name: "postgres.user_update", Spec: modules.Spec{Params: roleUpdateParams}, Doc: "Updates a Postgres user.\n\nCLI Examples:\n\n    salt '*' postgres.user_update 'username' user='user' host='hostname' port='port' password='password' rolepassword='rolepassword' valid_until='valid_until'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgRoleUpdate(ctx, c, name(c, "username"), "user")
			}},
		{Name: "postgres.user_remove", Spec: with([]modules.Param{req("username")}, conn6...), Doc: "Removes a user from the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.user_remove 'username'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgRoleRemove(ctx, c, name(c, "username"))
			}},
		{Name: "postgres.group_create", Spec: modules.Spec{Params: groupCreateParams}, Doc: "Creates a Postgres group. A group is postgres is similar to a user, but\ncannot login.\n\nCLI Example:\n\n    salt '*' postgres.group_create 'groupname' user='user' host='hostname' port='port' password='password' rolepassword='rolepassword'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgRoleCreate(ctx, c, name(c, "groupname"), "group")
			}},
		{Name: "postgres.group_update", Spec: modules.Spec{Params: groupUpdateParams}, Doc: "Updates a postgres group\n\nCLI Examples:\n\n    salt '*' postgres.group_update 'username' user='user' host='hostname' port='port' password='password' rolepassword='rolepassword'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgRoleUpdate(ctx, c, name(c, "groupname"), "group")
			}},
		{Name: "postgres.group_remove", Spec: with([]modules.Param{req("groupname")}, conn6...), Doc: "Removes a group from the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.group_remove 'groupname'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgRoleRemove(ctx, c, name(c, "groupname"))
			}},
		{Name: "postgres.available_extensions", Spec: modules.Spec{Params: conn6}, Doc: "List available postgresql extensions\n\nCLI Example:\n\n    salt '*' postgres.available_extensions",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgExtensions(ctx, c, pgConnOf(c.Args), false)
			}},
		{Name: "postgres.installed_extensions", Spec: modules.Spec{Params: conn6}, Doc: "List installed postgresql extensions\n\nCLI Example:\n\n    salt '*' postgres.installed_extensions",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgExtensions(ctx, c, pgConnOf(c.Args), true)
			}},
		{Name: "postgres.get_available_extension", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Get info about an available postgresql extension\n\nCLI Example:\n\n    salt '*' postgres.get_available_extension plpgsql",
			Fn: extGet(false)},
		{Name: "postgres.get_installed_extension", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Get info about an installed postgresql extension\n\nCLI Example:\n\n    salt '*' postgres.get_installed_extension plpgsql",
			Fn: extGet(true)},
		{Name: "postgres.is_available_extension", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Test if a specific extension is available\n\nCLI Example:\n\n    salt '*' postgres.is_available_extension",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgIsAvailableExt(ctx, c, pgConnOf(c.Args), name(c, "name"))
			}},
		{Name: "postgres.is_installed_extension", Spec: with([]modules.Param{req("name")}, conn6...), Doc: "Test if a specific extension is installed\n\nCLI Example:\n\n    salt '*' postgres.is_installed_extension",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				m, err := pgInstalledExt(ctx, c, pgConnOf(c.Args), name(c, "name"))
				return m != nil && m.Len() > 0, err
			}},
		{Name: "postgres.create_metadata", Spec: with([]modules.Param{req("name"), opt("ext_version", nil), opt("schema", nil)}, conn6...),
			Doc: "Get lifecycle information about an extension\n\nCLI Example:\n\n    salt '*' postgres.create_metadata adminpack",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgCreateMetadata(ctx, c, pgConnOf(c.Args), name(c, "name"), c.Args.Get("ext_version"), c.Args.Get("schema"))
			}},
		{Name: "postgres.drop_extension", Spec: with([]modules.Param{req("name"), opt("if_exists", nil), opt("restrict", nil), opt("cascade", nil)}, conn6...),
			Doc: "Drop an installed postgresql extension\n\nCLI Example:\n\n    salt '*' postgres.drop_extension 'adminpack'", Fn: pgDropExtension},
		{Name: "postgres.create_extension", Spec: with([]modules.Param{req("name"), opt("if_not_exists", nil), opt("schema", nil), opt("ext_version", nil), opt("from_version", nil)}, conn6...),
			Doc: "Install a postgresql extension\n\nCLI Example:\n\n    salt '*' postgres.create_extension 'adminpack'", Fn: pgCreateExtension},
		{Name: "postgres.owner_to", Spec: modules.Spec{Params: []modules.Param{req("dbname"), req("ownername"), opt("user", nil), opt("host", nil), opt("port", nil), opt("password", nil), runas}},
			Doc: "Set the owner of all schemas, functions, tables, views and sequences to\nthe given username.\n\nCLI Example:\n\n    salt '*' postgres.owner_to 'dbname' 'username'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				a := c.Args
				return pgOwnerTo(ctx, c, pgConn{user: a.Get("user"), host: a.Get("host"), port: a.Get("port"), db: a.Get("dbname"), password: a.Get("password"), runas: a.Get("runas")}, name(c, "dbname"), name(c, "ownername"))
			}},
		{Name: "postgres.schema_create", Spec: modules.Spec{Params: []modules.Param{req("dbname"), req("name"), opt("owner", nil), opt("user", nil), opt("db_user", nil), opt("db_password", nil), opt("db_host", nil), opt("db_port", nil)}},
			Doc: "Creates a Postgres schema.\n\nCLI Example:\n\n    salt '*' postgres.schema_create dbname name owner='owner' user='user' db_user='user' db_password='password' db_host='hostname' db_port='port'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				conn, n, db := pgSchemaConn(c.Args), name(c, "name"), name(c, "dbname")
				v, err := pgSchemaGet(ctx, c, conn, n)
				if err != nil {
					return nil, err
				}
				if payload.Truthy(v) {
					c.Log().Info(fmt.Sprintf("'%s' already exists in '%s'", n, db))
					return false, nil
				}
				q := fmt.Sprintf(`CREATE SCHEMA "%s"`, n)
				if o := c.Args.Get("owner"); o != nil {
					q = fmt.Sprintf(`%s AUTHORIZATION "%s"`, q, pyfmt.Str(o))
				}
				return pgOK(ctx, c, conn, q)
			}},
		{Name: "postgres.schema_remove", Spec: modules.Spec{Params: schemaArgs}, Doc: "Removes a schema from the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.schema_remove dbname schemaname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				conn, n, db := pgSchemaConn(c.Args), name(c, "name"), name(c, "dbname")
				first := conn
				first.runas = nil // Salt checks existence without the system user
				v, err := pgSchemaGet(ctx, c, first, n)
				if err != nil {
					return nil, err
				}
				if !payload.Truthy(v) {
					c.Log().Info(fmt.Sprintf("Schema '%s' does not exist in '%s'", n, db))
					return false, nil
				}
				if _, err := pgRunCmd(ctx, c, conn, "-c", fmt.Sprintf(`DROP SCHEMA "%s"`, n)); err != nil {
					return nil, err
				}
				if v, err = pgSchemaGet(ctx, c, conn, n); err != nil {
					return nil, err
				}
				if payload.Truthy(v) {
					c.Log().Info(fmt.Sprintf("Failed to delete schema '%s'.", n))
					return false, nil
				}
				return true, nil
			}},
		{Name: "postgres.schema_exists", Spec: modules.Spec{Params: schemaArgs}, Doc: "Checks if a schema exists on the Postgres server.\n\nCLI Example:\n\n    salt '*' postgres.schema_exists dbname schemaname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				v, err := pgSchemaGet(ctx, c, pgSchemaConn(c.Args), name(c, "name"))
				return payload.Truthy(v), err
			}},
		{Name: "postgres.schema_get", Spec: modules.Spec{Params: schemaArgs}, Doc: "Return a dict with information about schemas in a database.\n\nCLI Example:\n\n    salt '*' postgres.schema_get dbname name",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgSchemaGet(ctx, c, pgSchemaConn(c.Args), name(c, "name"))
			}},
		{Name: "postgres.schema_list", Spec: modules.Spec{Params: []modules.Param{req("dbname"), opt("user", nil), opt("db_user", nil), opt("db_password", nil), opt("db_host", nil), opt("db_port", nil)}},
			Doc: "Return a dict with information about schemas in a Postgres database.\n\nCLI Example:\n\n    salt '*' postgres.schema_list dbname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgSchemaList(ctx, c, pgSchemaConn(c.Args))
			}},
		{Name: "postgres.language_list", Spec: modules.Spec{Params: langArgs[1:]}, Doc: "Return a list of languages in a database.\n\nCLI Example:\n\n    salt '*' postgres.language_list dbname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pgLanguages(ctx, c, langConn(c.Args)) }},
		{Name: "postgres.language_exists", Spec: modules.Spec{Params: langArgs}, Doc: "Checks if language exists in a database.\n\nCLI Example:\n\n    salt '*' postgres.language_exists plpgsql dbname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				l, err := pgLanguages(ctx, c, langConn(c.Args))
				if err != nil {
					return nil, err
				}
				_, ok := l.Get(name(c, "name"))
				return ok, nil
			}},
		{Name: "postgres.language_create", Spec: modules.Spec{Params: langArgs}, Doc: "Installs a language into a database\n\nCLI Example:\n\n    salt '*' postgres.language_create plpgsql dbname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pgLanguageChange(ctx, c, true) }},
		{Name: "postgres.language_remove", Spec: modules.Spec{Params: langArgs}, Doc: "Removes a language from a database\n\nCLI Example:\n\n    salt '*' postgres.language_remove plpgsql dbname",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pgLanguageChange(ctx, c, false) }},
		{Name: "postgres.privileges_list", Spec: modules.Spec{Params: cat([]modules.Param{req("name"), req("object_type")}, privTail)},
			Doc: "Return a list of privileges for the specified object.\n\nCLI Example:\n\n    salt '*' postgres.privileges_list table_name table maintenance_db=db_name",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pgPrivilegesList(ctx, c, privConn(c.Args), name(c, "name"), name(c, "object_type"), name(c, "prepend"))
			}},
		{Name: "postgres.has_privileges", Spec: modules.Spec{Params: cat([]modules.Param{req("name"), req("object_name"), req("object_type"), opt("privileges", nil), opt("grant_option", nil)}, privTail)},
			Doc: "Check if a role has the specified privileges on an object\n\nCLI Example:\n\n    salt '*' postgres.has_privileges user_name table_name table SELECT,INSERT maintenance_db=db_name",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				a := c.Args
				return pgHasPrivileges(ctx, c, privConn(a), name(c, "name"), name(c, "object_name"), a.Get("object_type"), a.Get("privileges"), a.Get("grant_option"), name(c, "prepend"))
			}},
		{Name: "postgres.privileges_grant", Spec: modules.Spec{Params: cat([]modules.Param{req("name"), req("object_name"), req("object_type"), opt("privileges", nil), opt("grant_option", nil)}, privTail)},
			Doc: "Grant privileges on a postgres object\n\nCLI Example:\n\n    salt '*' postgres.privileges_grant user_name table_name table SELECT,UPDATE maintenance_db=db_name",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return pgPrivilegesChange(ctx, c, true) }},
		{Name: "postgres.privileges_revoke", Spec: modules.Spec{Params: cat([]modules.Param{req("name"), req("object_name"), req("object_type"), opt("privileges", nil)}, privTail)},
			Doc: "Revoke privileges on a postgres object\n\nCLI Example:\n\n    salt '*' postgres.privileges_revoke user_name table_name table SELECT,UPDATE maintenance_db=db_name",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return pgPrivilegesChange(ctx, c, false) }},
		{Name: "postgres.datadir_init", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("auth", "password"), opt("user", nil), opt("password", nil), opt("encoding", "UTF8"),
			opt("locale", nil), opt("waldir", nil), opt("checksums", false), runas}},
			Doc: "Initializes a postgres data directory\n\nCLI Example:\n\n    salt '*' postgres.datadir_init '/var/lib/pgsql/data'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if pgDatadirExists(name(c, "name")) {
					c.Log().Info(fmt.Sprintf("%s already exists", name(c, "name")))
					return false, nil
				}
				out, err := pgInitdb(ctx, c)
				if err != nil {
					return nil, err
				}
				return cmdRetcodeZero(out.retcode), nil
			}},
		{Name: "postgres.datadir_exists", Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Doc: "Checks if postgres data directory has been initialized\n\nCLI Example:\n\n    salt '*' postgres.datadir_exists '/var/lib/pgsql/data'",
			Fn:  func(_ context.Context, c *modules.Call) (any, error) { return pgDatadirExists(name(c, "name")), nil }},
	}
}

func pgDBList(ctx context.Context, c *modules.Call, conn pgConn) (*payload.Map, error) {
	query := `SELECT datname as "Name", pga.rolname as "Owner", pg_encoding_to_char(encoding) as "Encoding", ` +
		`datcollate as "Collate", datctype as "Ctype", datacl as "Access privileges", spcname as "Tablespace" ` +
		"FROM pg_database pgd, pg_roles pga, pg_tablespace pgts WHERE pga.oid = pgd.datdba AND pgts.oid = pgd.dattablespace"
	rows, err := pgQuery(ctx, c, conn, query, false)
	if err != nil {
		return nil, err
	}
	return pgByKey(rows, "Name"), nil
}

func pgTablespaces(ctx context.Context, c *modules.Call, conn pgConn) (*payload.Map, error) {
	query := `SELECT spcname as "Name", pga.rolname as "Owner", spcacl as "ACL", spcoptions as "Opts", pg_tablespace_location(pgts.oid) as "Location" ` +
		"FROM pg_tablespace pgts, pg_roles pga WHERE pga.oid = pgts.spcowner"
	rows, err := pgQuery(ctx, c, conn, query, false)
	if err != nil {
		return nil, err
	}
	return pgByKey(rows, "Name"), nil
}

func pgDBCreate(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	q := fmt.Sprintf(`CREATE DATABASE "%s"`, pyfmt.Str(a.Get("name")))
	type kv struct {
		key   string
		val   any
		quote string
	}
	var chunks []string
	for _, w := range []kv{{"TABLESPACE", a.Get("tablespace"), `"`}, {"OWNER", a.Get("owner"), `"`}, {"TEMPLATE", a.Get("template"), ""},
		{"ENCODING", a.Get("encoding"), "'"}, {"LC_COLLATE", a.Get("lc_collate"), "'"}, {"LC_CTYPE", a.Get("lc_ctype"), "'"}} {
		v := w.val
		if w.quote != "" {
			var err error
			if v, err = pgQuoteDDL(v, w.quote); err != nil {
				return nil, err
			}
		}
		if v != nil {
			chunks = append(chunks, w.key, "=", pyfmt.Str(v))
		}
	}
	if len(chunks) > 0 {
		q += strings.Join(append([]string{" WITH"}, chunks...), " ")
	}
	return pgOK(ctx, c, pgConnOf(a), q)
}

func pgDBAlter(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	ts, owner := a.Get("tablespace"), a.Get("owner")
	if !payload.Truthy(ts) && !payload.Truthy(owner) {
		return true, nil
	}
	n := pyfmt.Str(a.Get("name"))
	conn := pgConnOf(a)
	var last *cmdOutcome
	if payload.Truthy(owner) && payload.Truthy(a.Get("owner_recurse")) {
		oc := conn
		oc.db = n
		out, err := pgOwnerTo(ctx, c, oc, n, pyfmt.Str(owner))
		if err != nil {
			return nil, err
		}
		rc, _ := out.Get("retcode")
		return cmdRetcodeZero(rc), nil
	}
	var queries []string
	if payload.Truthy(owner) {
		queries = append(queries, fmt.Sprintf(`ALTER DATABASE "%s" OWNER TO "%s"`, n, pyfmt.Str(owner)))
	}
	if payload.Truthy(ts) {
		queries = append(queries, fmt.Sprintf(`ALTER DATABASE "%s" SET TABLESPACE "%s"`, n, pyfmt.Str(ts)))
	}
	for _, q := range queries {
		out, err := pgRunCmd(ctx, c, conn, "-c", q)
		if err != nil {
			return nil, err
		}
		last = out
	}
	return cmdRetcodeZero(last.retcode), nil
}

func pgTablespaceAlter(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	n := pyfmt.Str(a.Get("name"))
	newName, newOwner, set, reset := a.Get("new_name"), a.Get("new_owner"), a.Get("set_option"), a.Get("reset_option")
	if !payload.Truthy(newName) && !payload.Truthy(newOwner) && !payload.Truthy(set) && !payload.Truthy(reset) {
		return true, nil
	}
	var queries []string
	if payload.Truthy(newName) {
		queries = append(queries, fmt.Sprintf(`ALTER TABLESPACE "%s" RENAME TO "%s"`, n, pyfmt.Str(newName)))
	}
	if payload.Truthy(newOwner) {
		queries = append(queries, fmt.Sprintf(`ALTER TABLESPACE "%s" OWNER TO "%s"`, n, pyfmt.Str(newOwner)))
	}
	if payload.Truthy(set) {
		m, ok := set.(*payload.Map)
		if !ok || m.Len() == 0 {
			return nil, fmt.Errorf("%w: set_option must be a dictionary", modules.ErrInvocation)
		}
		it := m.Items()[0]
		queries = append(queries, fmt.Sprintf(`ALTER TABLESPACE "%s" SET (%s = %s)`, n, pyfmt.Str(it.Key), pyfmt.Str(it.Value)))
	}
	if payload.Truthy(reset) {
		queries = append(queries, fmt.Sprintf(`ALTER TABLESPACE "%s" RESET (%s)`, n, pyfmt.Str(reset)))
	}
	for _, q := range queries {
		ok, err := pgOK(ctx, c, pgConnOf(a), q)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func pgDropExtension(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	n := pyfmt.Str(a.Get("name"))
	conn := pgConnOf(a)
	args := []string{"DROP EXTENSION"}
	if payload.Truthy(a.Get("if_exists")) {
		args = append(args, "IF EXISTS")
	}
	args = append(args, n)
	if a.Get("cascade") == nil || payload.Truthy(a.Get("cascade")) {
		args = append(args, "CASCADE")
	}
	if payload.Truthy(a.Get("restrict")) {
		args = append(args, "RESTRICT")
	}
	args = append(args, ";")
	inst, err := pgInstalledExt(ctx, c, conn, n)
	if err != nil {
		return nil, err
	}
	if inst != nil && inst.Len() > 0 {
		if _, err := pgRunCmd(ctx, c, conn, "-c", strings.Join(args, " ")); err != nil {
			return nil, err
		}
	}
	if inst, err = pgInstalledExt(ctx, c, conn, n); err != nil {
		return nil, err
	}
	if inst != nil && inst.Len() > 0 {
		c.Log().Info(fmt.Sprintf("Failed to drop ext: %s", n))
		return false, nil
	}
	return true, nil
}

func pgCreateExtension(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	n := pyfmt.Str(a.Get("name"))
	conn := pgConnOf(a)
	ver, schema, from := a.Get("ext_version"), a.Get("schema"), a.Get("from_version")
	md, err := pgCreateMetadata(ctx, c, conn, n, ver, schema)
	if err != nil {
		return nil, err
	}
	installed := !slices.Contains(md, any(PostgresExtNotInstalled))
	installable, err := pgIsAvailableExt(ctx, c, conn, n)
	if err != nil {
		return nil, err
	}
	if installable {
		var cmd string
		if !installed {
			args := []string{"CREATE EXTENSION"}
			if a.Get("if_not_exists") == nil || payload.Truthy(a.Get("if_not_exists")) {
				args = append(args, "IF NOT EXISTS")
			}
			args = append(args, `"`+n+`"`)
			var sargs []string
			if payload.Truthy(schema) {
				sargs = append(sargs, fmt.Sprintf(`SCHEMA "%s"`, pyfmt.Str(schema)))
			}
			if payload.Truthy(ver) {
				sargs = append(sargs, "VERSION "+pyfmt.Str(ver))
			}
			if payload.Truthy(from) {
				sargs = append(sargs, "FROM "+pyfmt.Str(from))
			}
			if len(sargs) > 0 {
				args = append(append(args, "WITH"), sargs...)
			}
			args = append(args, ";")
			cmd = strings.TrimSpace(strings.Join(args, " "))
		} else {
			var args []string
			if payload.Truthy(schema) && slices.Contains(md, any(PostgresExtToMove)) {
				args = append(args, fmt.Sprintf(`ALTER EXTENSION "%s" SET SCHEMA "%s";`, n, pyfmt.Str(schema)))
			}
			if payload.Truthy(ver) && slices.Contains(md, any(PostgresExtToUpgrade)) {
				args = append(args, fmt.Sprintf(`ALTER EXTENSION "%s" UPDATE TO %s;`, n, pyfmt.Str(ver)))
			}
			cmd = strings.TrimSpace(strings.Join(args, " "))
		}
		if cmd != "" {
			if _, err := pgRunCmd(ctx, c, conn, "-c", cmd); err != nil {
				return nil, err
			}
		}
	}
	if md, err = pgCreateMetadata(ctx, c, conn, n, ver, schema); err != nil {
		return nil, err
	}
	for _, f := range md {
		if f != PostgresExtInstalled {
			c.Log().Info(fmt.Sprintf("Failed to create ext: %s", n))
			return false, nil
		}
	}
	return true, nil
}

// pgOwnerTo is owner_to: one transaction giving the database and every
// schema, table, view, function, aggregate and sequence in it to owner,
// run from a temporary SQL file; returns the cmd.run_all dict.
func pgOwnerTo(ctx context.Context, c *modules.Call, conn pgConn, dbname, owner string) (*payload.Map, error) {
	var sql strings.Builder
	sql.WriteString("begin;\n")
	fmt.Fprintf(&sql, "alter database \"%s\" owner to \"%s\";\n", dbname, owner)
	for _, q := range [][2]string{
		{"alter schema %s owner to %s;", "select quote_ident(schema_name) as n from information_schema.schemata;"},
		{"alter table %s owner to %s;", "select quote_ident(table_schema)||'.'||quote_ident(table_name) as n from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema');"},
		{"alter function %s owner to %s;", "select p.oid::regprocedure::text as n from pg_catalog.pg_proc p join pg_catalog.pg_namespace ns on p.pronamespace=ns.oid where ns.nspname not in ('pg_catalog', 'information_schema')  and p.prokind <> 'a';"},
		{"alter aggregate %s owner to %s;", "select p.oid::regprocedure::text as n from pg_catalog.pg_proc p join pg_catalog.pg_namespace ns on p.pronamespace=ns.oid where ns.nspname not in ('pg_catalog', 'information_schema') and p.prokind = 'a';"},
		{"alter sequence %s owner to %s;", "select quote_ident(sequence_schema)||'.'||quote_ident(sequence_name) as n from information_schema.sequences;"},
	} {
		rows, err := pgQuery(ctx, c, conn, q[1], false)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			fmt.Fprintf(&sql, q[0]+"\n", pgStr(r, "n"), owner)
		}
	}
	sql.WriteString("commit;\n")
	f, err := os.CreateTemp("", "gsalt-owner-*.sql")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(sql.String())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, werr)
	}
	out, err := pgRunCmd(ctx, c, conn, "-f", f.Name())
	if err != nil {
		return nil, err
	}
	return out.toMap(), nil
}

// pgLanguageChange is language_create / language_remove (whose existence
// check, as in Salt, uses the default connection to maintenance_db).
func pgLanguageChange(ctx context.Context, c *modules.Call, create bool) (any, error) {
	a := c.Args
	n, db := pyfmt.Str(a.Get("name")), pyfmt.Str(a.Get("maintenance_db"))
	langs, err := pgLanguages(ctx, c, pgConn{db: a.Get("maintenance_db")})
	if err != nil {
		return nil, err
	}
	_, exists := langs.Get(n)
	if create && exists {
		c.Log().Info(fmt.Sprintf("Language %s already exists in %s", n, db))
		return false, nil
	}
	if !create && !exists {
		c.Log().Info(fmt.Sprintf("Language %s does not exist in %s", n, db))
		return false, nil
	}
	q := "CREATE LANGUAGE " + n
	if !create {
		q = "DROP LANGUAGE " + n
	}
	return pgOK(ctx, c, pgConn{user: a.Get("user"), host: a.Get("host"), port: a.Get("port"), db: a.Get("maintenance_db"), password: a.Get("password"), runas: a.Get("runas")}, q)
}

// pgPrivilegesChange is privileges_grant / privileges_revoke.
func pgPrivilegesChange(ctx context.Context, c *modules.Call, grant bool) (any, error) {
	a := c.Args
	n, obj, prepend := pyfmt.Str(a.Get("name")), pyfmt.Str(a.Get("object_name")), pyfmt.Str(a.Get("prepend"))
	conn := pgConn{user: a.Get("user"), host: a.Get("host"), port: a.Get("port"), db: a.Get("maintenance_db"), password: a.Get("password"), runas: a.Get("runas")}
	ot, privileges, privs, err := pgPrivOpts(a.Get("object_type"), a.Get("privileges"))
	if err != nil {
		return nil, err
	}
	has, err := pgHasPrivileges(ctx, c, conn, n, obj, ot, a.Get("privileges"), nil, prepend)
	if err != nil {
		return nil, err
	}
	if grant && has {
		c.Log().Info(fmt.Sprintf("The object: %s of type: %s already has privileges: %s set", obj, ot, privileges))
		return false, nil
	}
	if !grant && !has {
		c.Log().Info(fmt.Sprintf("The object: %s of type: %s does not have privileges: %s set", obj, ot, privileges))
		return false, nil
	}
	grants := strings.Join(privs, ",")
	var q string
	if grant {
		var on string
		switch ot {
		case "table", "sequence":
			on = fmt.Sprintf(`%s."%s"`, prepend, obj)
		case "function":
			on = obj
		default:
			on = `"` + obj + `"`
		}
		allIn := (ot == "table" || ot == "sequence") && strings.ToUpper(obj) == "ALL"
		switch {
		case ot == "group":
			q = fmt.Sprintf(`GRANT %s TO "%s"`, obj, n)
		case allIn:
			q = fmt.Sprintf(`GRANT %s ON ALL %sS IN SCHEMA %s TO "%s"`, grants, strings.ToUpper(ot), prepend, n)
		default:
			q = fmt.Sprintf(`GRANT %s ON %s %s TO "%s"`, grants, strings.ToUpper(ot), on, n)
		}
		if payload.Truthy(a.Get("grant_option")) {
			if ot == "group" {
				q += " WITH ADMIN OPTION"
			} else {
				q += " WITH GRANT OPTION"
			}
		}
	} else {
		on := obj
		if ot == "table" || ot == "sequence" {
			on = prepend + "." + obj
		}
		if ot == "group" {
			q = fmt.Sprintf("REVOKE %s FROM %s", obj, n)
		} else {
			q = fmt.Sprintf("REVOKE %s ON %s %s FROM %s", grants, strings.ToUpper(ot), on, n)
		}
	}
	return pgOK(ctx, c, conn, q)
}
