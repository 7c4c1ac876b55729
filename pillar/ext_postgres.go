package pillar

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// extPostgres is salt/pillar/postgres.py: sql_base's queries run against
// the PostgreSQL database of the master's postgres option (host
// localhost, user salt, pass salt, db salt, port 5432 by default). As
// psycopg2 does, the minion id replaces the query's %s as a quoted
// literal (%% is a percent sign) and the query is sent as text.
func extPostgres() ExtModule {
	return ExtModule{Name: "postgres", Variadic: true, Fn: postgresPillar}
}

func postgresPillar(ctx context.Context, c *ExtCall) (any, error) {
	o := map[string]any{"host": "localhost", "user": "salt", "pass": "salt", "db": "salt", "port": int64(5432)}
	if v, ok := c.Opts().Get("postgres"); ok {
		if m, ok := v.(*payload.Map); ok {
			for k := range o {
				if x, ok := m.Get(k); ok {
					o[k] = x
				}
			}
		}
	}
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.Host = pyfmt.Str(o["host"])
	cfg.User = pyfmt.Str(o["user"])
	cfg.Password = pyfmt.Str(o["pass"])
	cfg.Database = pyfmt.Str(o["db"])
	port, err := strconv.ParseUint(strings.TrimSpace(pyfmt.Str(o["port"])), 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid integer value %s for connection option \"port\"", pyfmt.Repr(pyfmt.Str(o["port"])))
	}
	cfg.Port = uint16(port)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	cfg.ConnectTimeout = 30 * time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		// psycopg2.connect raising OperationalError: the ext_pillar fails
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	args, _ := c.Args["*args"].([]any)
	kwargs, _ := c.Args["**kwargs"].(*payload.Map)
	run := func(ctx context.Context, query, minionID string) (sqlRows, error) {
		return postgresQuery(ctx, conn, query, minionID)
	}
	return sqlFetch(ctx, c.MinionID, args, kwargs, c.Log, run)
}

// psycopgInterpolate is psycopg2's cursor.execute(query, (minion_id,)):
// %s becomes the quoted literal, %% a percent sign; any other use of %
// is Python's %-formatting error, raised before the query is sent. A
// query without % is sent as it is.
func psycopgInterpolate(query, minionID string) (string, error) {
	if !strings.Contains(query, "%") {
		// psycopg2 sends a query without placeholders as it is
		return query, nil
	}
	lit := "'" + strings.ReplaceAll(minionID, "'", "''") + "'"
	var b strings.Builder
	used := 0
	for i := 0; i < len(query); i++ {
		ch := query[i]
		if ch != '%' {
			b.WriteByte(ch)
			continue
		}
		if i+1 >= len(query) {
			return "", errors.New("incomplete format")
		}
		switch query[i+1] {
		case '%':
			b.WriteByte('%')
		case 's':
			if used == 1 {
				return "", errors.New("tuple index out of range")
			}
			used++
			b.WriteString(lit)
		default:
			return "", fmt.Errorf("unsupported format character '%c' (0x%x) at index %d", query[i+1], query[i+1], i+1)
		}
		i++
	}
	if used == 0 {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// postgresQuery runs one query; a database error is errSQLQuery (logged,
// the earlier results kept), a formatting error fails the ext_pillar.
func postgresQuery(ctx context.Context, conn *pgx.Conn, query, minionID string) (sqlRows, error) {
	q, err := psycopgInterpolate(query, minionID)
	if err != nil {
		return sqlRows{}, err
	}
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return sqlRows{}, pgQueryErr(err)
	}
	defer rows.Close()
	var res sqlRows
	for _, fd := range rows.FieldDescriptions() {
		res.fields = append(res.fields, fd.Name)
	}
	fds := rows.FieldDescriptions()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return sqlRows{}, pgQueryErr(err)
		}
		raw := rows.RawValues()
		row := make([]any, len(vals))
		for i, v := range vals {
			if i < len(fds) && (fds[i].DataTypeOID == 114 || fds[i].DataTypeOID == 3802) && raw[i] != nil {
				// json and jsonb: psycopg2 decodes them, keeping key order
				d, err := render.DecodeJSON(raw[i])
				if err != nil {
					return sqlRows{}, fmt.Errorf("%w: %v", errSQLQuery, err)
				}
				row[i] = d
				continue
			}
			row[i] = pgValue(v)
		}
		res.rows = append(res.rows, row)
	}
	if err := rows.Err(); err != nil {
		return sqlRows{}, pgQueryErr(err)
	}
	return res, nil
}

func pgQueryErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %s", errSQLQuery, pe.Message)
	}
	return err
}

// pgValue converts a decoded column value to pillar data.
func pgValue(v any) any {
	switch x := v.(type) {
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64, float64, bool, string, nil:
		return x
	case float32:
		return float64(x)
	case []byte:
		return x
	case time.Time:
		return x.Format("2006-01-02T15:04:05.999999")
	case interface{ Int64Value() (int64, error) }:
		return v
	case *big.Int:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return pyfmt.Str(v)
}
