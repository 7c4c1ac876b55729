package pillar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// extSQLite3 is salt/pillar/sqlite3.py: sql_base's queries run against
// the SQLite database of the master's sqlite3:database option (default
// /var/lib/salt/pillar.db, busy timeout sqlite3:timeout seconds, 5.0),
// through the sqlite3 command-line shell with its JSON output.
func extSQLite3() ExtModule {
	return ExtModule{Name: "sqlite3", Variadic: true, Fn: sqlite3Pillar}
}

func sqlite3Pillar(ctx context.Context, c *ExtCall) (any, error) {
	database, timeout := "/var/lib/salt/pillar.db", 5.0
	if o, ok := c.Opts().Get("sqlite3"); ok {
		if m, ok := o.(*payload.Map); ok && m.Has("database") {
			if v, ok := m.Get("database"); ok {
				database = pyfmt.Str(v)
			}
			if v, ok := m.Get("timeout"); ok {
				switch x := v.(type) {
				case int64:
					timeout = float64(x)
				case float64:
					timeout = x
				case string:
					f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
					if err != nil {
						return nil, fmt.Errorf("could not convert string to float: %s", pyfmt.Repr(x))
					}
					timeout = f
				}
			}
		}
	}
	args, _ := c.Args["*args"].([]any)
	kwargs, _ := c.Args["**kwargs"].(*payload.Map)
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		return nil, errors.New("the sqlite3 command-line shell was not found")
	}
	run := func(ctx context.Context, query, minionID string) (sqlRows, error) {
		return sqlite3Query(ctx, bin, database, timeout, query, minionID)
	}
	return sqlFetch(ctx, c.MinionID, args, kwargs, c.Log, run)
}

// sqlite3Query runs one query with the minion id bound to its parameter.
func sqlite3Query(ctx context.Context, bin, database string, timeout float64, query, minionID string) (sqlRows, error) {
	// a dot-command argument in double quotes takes C escapes; its text
	// is an SQL string literal
	lit := "'" + strings.ReplaceAll(minionID, "'", "''") + "'"
	lit = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(lit)
	cmd := exec.CommandContext(ctx, bin, "-batch", "-bail", "-json",
		"-cmd", fmt.Sprintf(".timeout %d", int64(timeout*1000)),
		"-cmd", `.parameter set ?1 "`+lit+`"`,
		database)
	cmd.Stdin = strings.NewReader(query + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "unable to open database") {
			// sqlite3.connect raising: the ext_pillar fails
			return sqlRows{}, errors.New("unable to open database file")
		}
		if ctx.Err() != nil {
			return sqlRows{}, ctx.Err()
		}
		return sqlRows{}, fmt.Errorf("%w: %s", errSQLQuery, msg)
	}
	return decodeSQLiteJSON(stdout.Bytes())
}

// decodeSQLiteJSON reads the shell's JSON rows keeping the column order
// (and repeated column names).
func decodeSQLiteJSON(b []byte) (sqlRows, error) {
	var res sqlRows
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	bad := func(err error) (sqlRows, error) {
		return sqlRows{}, fmt.Errorf("%w: sqlite3 output: %v", errSQLQuery, err)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return bad(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return bad(fmt.Errorf("unexpected %v", tok))
		}
		for dec.More() {
			if _, err = dec.Token(); err != nil {
				return bad(err)
			}
			var names []string
			var row []any
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return bad(err)
				}
				name, _ := kt.(string)
				vt, err := dec.Token()
				if err != nil {
					return bad(err)
				}
				var v any
				switch x := vt.(type) {
				case json.Number:
					s := string(x)
					if strings.ContainsAny(s, ".eE") {
						f, _ := strconv.ParseFloat(s, 64)
						v = f
					} else if n, err := strconv.ParseInt(s, 10, 64); err == nil {
						v = n
					} else {
						f, _ := strconv.ParseFloat(s, 64)
						v = f
					}
				case string, nil:
					v = x
				default:
					v = fmt.Sprint(x)
				}
				names = append(names, name)
				row = append(row, v)
			}
			if _, err := dec.Token(); err != nil { // }
				return bad(err)
			}
			if res.fields == nil {
				res.fields = names
			}
			res.rows = append(res.rows, row)
		}
		if _, err := dec.Token(); err != nil { // ]
			return bad(err)
		}
	}
}
