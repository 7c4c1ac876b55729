package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/wire/payload"
)

// Pgjsonb is Salt's pgjsonb returner (salt/returners/pgjsonb.py) on
// jackc/pgx: returns, job loads and events as jsonb in the tables its
// documentation has the admin create (jids, salt_returns, salt_events).
// Options: returner.pgjsonb.{host,user,pass,db,port,sslmode,sslcert,
// sslkey,sslrootcert} (or a "returner.pgjsonb" dict), an alternative set
// under "<ret_config>.returner.pgjsonb.*" (Salt's --return_config), single
// overrides from --return_kwargs.
type Pgjsonb struct {
	env returners.Env

	mu    sync.Mutex
	pools map[string]*pgxpool.Pool
}

// NewPgjsonb opens the pgjsonb returner (connections are made on use).
func NewPgjsonb(env returners.Env) *Pgjsonb {
	if env.Now == nil {
		env.Now = time.Now
	}
	return &Pgjsonb{env: env, pools: map[string]*pgxpool.Pool{}}
}

var pgAttrs = map[string]string{
	"host": "host", "user": "user", "pass": "pass", "db": "db", "port": "port",
	"sslmode": "sslmode", "sslcert": "sslcert", "sslkey": "sslkey", "sslrootcert": "sslrootcert", "sslcrl": "sslcrl",
}

var pgDefaults = map[string]any{"host": "localhost", "user": "salt", "pass": "salt", "db": "salt", "port": int64(5432)}

// dsn returns the connection string for a call's options.
func (p *Pgjsonb) dsn(ret *payload.Map) (string, error) {
	o := returners.Options(p.env.Option, "returner.pgjsonb", ret, pgAttrs, pgDefaults)
	port, err := strconv.Atoi(strings.TrimSpace(pyfmt.Str(o["port"])))
	if err != nil {
		return "", fmt.Errorf("pgjsonb returner: bad port %q", pyfmt.Str(o["port"]))
	}
	q := func(v any) string {
		s := pyfmt.Str(v)
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	}
	parts := []string{"host=" + q(o["host"]), "port=" + strconv.Itoa(port), "dbname=" + q(o["db"]),
		"user=" + q(o["user"]), "password=" + q(o["pass"]), "connect_timeout=5"}
	for _, k := range []string{"sslmode", "sslcert", "sslkey", "sslrootcert"} {
		if v, ok := o[k]; ok && v != nil {
			parts = append(parts, k+"="+q(v))
		}
	}
	if _, ok := o["sslcrl"]; ok {
		p.env.Log.Warn("pgjsonb returner: sslcrl is not supported by the driver and is ignored")
	}
	return strings.Join(parts, " "), nil
}

func (p *Pgjsonb) pool(ctx context.Context, ret *payload.Map) (*pgxpool.Pool, error) {
	dsn, err := p.dsn(ret)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl, ok := p.pools[dsn]; ok {
		return pl, nil
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgjsonb returner: %w", err)
	}
	cfg.MaxConns = 4
	pl, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: pgjsonb returner could not connect to database: %w", returners.ErrUnavailable, err)
	}
	p.pools[dsn] = pl
	return pl, nil
}

// Close closes every connection pool.
func (p *Pgjsonb) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, pl := range p.pools {
		pl.Close()
		delete(p.pools, k)
	}
	return nil
}

// classify wraps errors that mean "the database is not there" with
// returners.ErrUnavailable.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", "53", "57":
			return fmt.Errorf("%w: %w", returners.ErrUnavailable, err)
		}
		return err
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection") {
		return fmt.Errorf("%w: pgjsonb returner could not reach the database: %w", returners.ErrUnavailable, err)
	}
	return err
}

// stmt is one SQL statement of a batch.
type stmt struct {
	sql  string
	args []any
}

func (p *Pgjsonb) stmts(op returners.Op) ([]stmt, error) {
	ts := float64(op.Time.UnixNano()) / 1e9
	switch op.Kind {
	case returners.OpLoad:
		load, err := returners.JSON(op.Data)
		if err != nil {
			return nil, err
		}
		return []stmt{{`INSERT INTO jids (jid, load) VALUES ($1, $2::jsonb) ON CONFLICT (jid) DO UPDATE SET load = EXCLUDED.load`,
			[]any{op.JID, load}}}, nil
	case returners.OpReturn:
		ret := op.Data
		rv, _ := ret.Get("return")
		retJSON, err := returners.JSON(rv)
		if err != nil {
			return nil, err
		}
		full, err := returners.JSON(ret)
		if err != nil {
			return nil, err
		}
		return []stmt{{`INSERT INTO salt_returns (fun, jid, return, id, success, full_ret, alter_time)
                    VALUES ($1, $2, $3::jsonb, $4, $5, $6::jsonb, to_timestamp($7))`,
			[]any{textOf(mustGet(ret, "fun")), textOf(mustGet(ret, "jid")), retJSON, textOf(mustGet(ret, "id")),
				successText(ret), full, ts}}}, nil
	case returners.OpEvents:
		out := make([]stmt, 0, len(op.Events))
		for _, e := range op.Events {
			data, err := returners.JSON(e.Data)
			if err != nil {
				return nil, err
			}
			out = append(out, stmt{`INSERT INTO salt_events (tag, data, master_id, alter_time)
                     VALUES ($1, $2::jsonb, $3, to_timestamp($4))`, []any{e.Tag, data, p.env.ID, ts}})
		}
		return out, nil
	}
	return nil, fmt.Errorf("pgjsonb returner: unknown write %q", op.Kind)
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	s, err := returners.JSON(v)
	if err != nil {
		return pyfmt.Str(v)
	}
	return s
}

// successText is psycopg2's rendering of ret.get("success", False) into
// the varchar column.
func successText(ret *payload.Map) string {
	v, ok := ret.Get("success")
	if !ok {
		return "false"
	}
	if b, ok := v.(bool); ok {
		if b {
			return "true"
		}
		return "false"
	}
	return pyfmt.Str(v)
}

// Apply writes ops in order: consecutive ops for the same database in one
// transaction. Connection failures wrap returners.ErrUnavailable.
func (p *Pgjsonb) Apply(ctx context.Context, ops []returners.Op) error {
	for i := 0; i < len(ops); {
		var ret *payload.Map
		if ops[i].Kind == returners.OpReturn {
			ret = ops[i].Data
		}
		dsn, err := p.dsn(ret)
		if err != nil {
			return err
		}
		j := i + 1
		for ; j < len(ops); j++ {
			var r *payload.Map
			if ops[j].Kind == returners.OpReturn {
				r = ops[j].Data
			}
			if d, err := p.dsn(r); err != nil || d != dsn {
				break
			}
		}
		if err := p.applyOne(ctx, ret, ops[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (p *Pgjsonb) applyOne(ctx context.Context, ret *payload.Map, ops []returners.Op) error {
	pl, err := p.pool(ctx, ret)
	if err != nil {
		return err
	}
	var all []stmt
	for _, op := range ops {
		s, err := p.stmts(op)
		if err != nil {
			return fmt.Errorf("pgjsonb returner: %w", err)
		}
		all = append(all, s...)
	}
	err = pgx.BeginFunc(ctx, pl, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, s := range all {
			b.Queue(s.sql, s.args...)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	return classify(err)
}

// Return is returner(ret): one row in salt_returns.
func (p *Pgjsonb) Return(ctx context.Context, ret *payload.Map) error {
	return p.Apply(ctx, []returners.Op{{Kind: returners.OpReturn, JID: ret.Str("jid"), Data: ret, Time: p.env.Now()}})
}

// SaveLoad is save_load(jid, load): the jids row, replaced when it exists.
func (p *Pgjsonb) SaveLoad(ctx context.Context, jid string, load *payload.Map) error {
	return p.Apply(ctx, []returners.Op{{Kind: returners.OpLoad, JID: jid, Data: load, Time: p.env.Now()}})
}

// EventReturn is event_return(events): one salt_events row per event.
func (p *Pgjsonb) EventReturn(ctx context.Context, events []returners.Event) error {
	return p.Apply(ctx, []returners.Op{{Kind: returners.OpEvents, Events: events, Time: p.env.Now()}})
}

func (p *Pgjsonb) query(ctx context.Context, sql string, args []any, row func(pgx.Rows) error) error {
	pl, err := p.pool(ctx, nil)
	if err != nil {
		return err
	}
	rows, err := pl.Query(ctx, sql, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}

func scanJSON(b []byte) (*payload.Map, error) {
	v, err := returners.ParseJSON(b)
	if err != nil {
		return nil, err
	}
	m, _ := v.(*payload.Map)
	if m == nil {
		m = payload.NewMap()
	}
	return m, nil
}

// GetLoad is get_load(jid): the jids row's load, nil when there is none.
func (p *Pgjsonb) GetLoad(ctx context.Context, jid string) (*payload.Map, error) {
	var out *payload.Map
	err := p.query(ctx, `SELECT load::text FROM jids WHERE jid = $1`, []any{jid}, func(r pgx.Rows) error {
		var s string
		if err := r.Scan(&s); err != nil {
			return err
		}
		m, err := scanJSON([]byte(s))
		out = m
		return err
	})
	return out, err
}

// GetJID is get_jid(jid): minion id -> full_ret.
func (p *Pgjsonb) GetJID(ctx context.Context, jid string) (*payload.Map, error) {
	out := payload.NewMap()
	err := p.query(ctx, `SELECT id, full_ret::text FROM salt_returns WHERE jid = $1 ORDER BY alter_time`, []any{jid}, func(r pgx.Rows) error {
		var id, s string
		if err := r.Scan(&id, &s); err != nil {
			return err
		}
		m, err := scanJSON([]byte(s))
		out.Set(id, m)
		return err
	})
	return out, err
}

// GetJIDs is get_jids: every jids row.
func (p *Pgjsonb) GetJIDs(ctx context.Context) ([]returners.JobLoad, error) {
	var out []returners.JobLoad
	err := p.query(ctx, `SELECT jid, load::text FROM jids ORDER BY jid`, nil, func(r pgx.Rows) error {
		var jid, s string
		if err := r.Scan(&jid, &s); err != nil {
			return err
		}
		m, err := scanJSON([]byte(s))
		out = append(out, returners.JobLoad{JID: jid, Load: m})
		return err
	})
	return out, err
}

// GetMinions is get_minions: the ids with a return, sorted.
func (p *Pgjsonb) GetMinions(ctx context.Context) ([]string, error) {
	var out []string
	err := p.query(ctx, `SELECT DISTINCT id FROM salt_returns`, nil, func(r pgx.Rows) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		out = append(out, id)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// GetFun is get_fun(fun): each minion's return of its latest job running
// fun. (Salt's own query quotes a column with MySQL backticks, which
// PostgreSQL rejects; this is the query it means.)
func (p *Pgjsonb) GetFun(ctx context.Context, fun string) (*payload.Map, error) {
	out := payload.NewMap()
	err := p.query(ctx, `SELECT s.id, s.full_ret::text FROM salt_returns s
        JOIN (SELECT MAX(jid) AS jid, id FROM salt_returns WHERE fun = $1 GROUP BY id) mx
        ON s.jid = mx.jid AND s.id = mx.id WHERE s.fun = $1 ORDER BY s.id`, []any{fun}, func(r pgx.Rows) error {
		var id, s string
		if err := r.Scan(&id, &s); err != nil {
			return err
		}
		m, err := scanJSON([]byte(s))
		out.Set(id, m)
		return err
	})
	return out, err
}

// CleanOldJobs is clean_old_jobs: rows older than keep are deleted (jids
// through their returns' alter_time), or first copied to the *_archive
// tables (created LIKE the originals) when archive is set.
func (p *Pgjsonb) CleanOldJobs(ctx context.Context, keep time.Duration, archive bool) error {
	if keep <= 0 {
		return nil
	}
	pl, err := p.pool(ctx, nil)
	if err != nil {
		return err
	}
	secs := int64(keep / time.Second)
	err = pgx.BeginFunc(ctx, pl, func(tx pgx.Tx) error {
		var stamp time.Time
		if err := tx.QueryRow(ctx, `SELECT NOW() - make_interval(secs => $1)`, float64(secs)).Scan(&stamp); err != nil {
			return err
		}
		var sqls []string
		if archive {
			for _, t := range []string{"jids", "salt_returns", "salt_events"} {
				sqls = append(sqls, "CREATE TABLE IF NOT EXISTS "+t+"_archive (LIKE "+t+")")
			}
			sqls = append(sqls,
				"INSERT INTO jids_archive SELECT * FROM jids WHERE jid IN (SELECT DISTINCT jid FROM salt_returns WHERE alter_time < $1)",
				"INSERT INTO salt_returns_archive SELECT * FROM salt_returns WHERE alter_time < $1",
				"INSERT INTO salt_events_archive SELECT * FROM salt_events WHERE alter_time < $1")
		}
		sqls = append(sqls,
			"DELETE FROM jids WHERE jid IN (SELECT DISTINCT jid FROM salt_returns WHERE alter_time < $1)",
			"DELETE FROM salt_returns WHERE alter_time < $1",
			"DELETE FROM salt_events WHERE alter_time < $1")
		for _, s := range sqls {
			var args []any
			if strings.Contains(s, "$1") {
				args = []any{stamp}
			}
			if _, err := tx.Exec(ctx, s, args...); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	return classify(err)
}
