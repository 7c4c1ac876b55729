package pillar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's salt/pillar/sql_base.py, shared by the sqlite3 and
// postgres ext_pillars: the configured queries (positional ones merged at
// the top, keyword ones under their key, in sorted key order) each run
// with the minion id as their one parameter, and their rows become nested
// dicts: the first depth-1 columns are keys, the rest values (as_list
// collects repeated values in lists, with_lists turns the dicts at the
// given levels into lists of their values, ignore_null skips NULLs).

// sqlQuery is one normalized query (SqlBaseExtPillar.extract_queries).
type sqlQuery struct {
	root       string // "" for a positional query (merged at the top)
	query      string
	depth      int
	asList     bool
	asJSON     bool
	withLists  []int
	ignoreNull bool
}

// sqlRows is what one query returned: the column names and the rows.
type sqlRows struct {
	fields []string
	rows   [][]any
}

// errSQLQuery is a database error while running a query: Salt's cursor
// context manager logs it and the pillar keeps what the earlier queries
// gave.
var errSQLQuery = errors.New("sql query failed")

// sqlExtractQueries normalizes the configuration into queries.
func sqlExtractQueries(args []any, kwargs *payload.Map) ([]sqlQuery, error) {
	type raw struct {
		root string
		v    any
	}
	var buf []raw
	for _, a := range args {
		buf = append(buf, raw{"", a})
	}
	var keys []string
	if kwargs != nil {
		for _, it := range kwargs.Items() {
			keys = append(keys, payload.KeyString(it.Key))
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := kwargs.Get(k)
		buf = append(buf, raw{k, v})
	}
	var out []sqlQuery
	for _, b := range buf {
		q := sqlQuery{root: b.root}
		switch v := b.v.(type) {
		case string:
			if v == "" {
				continue
			}
			q.query = v
		case []any:
			if len(v) == 0 || !payload.Truthy(v[0]) {
				continue
			}
			q.query = pyfmt.Str(v[0])
			if len(v) > 1 {
				d, ok := sqlInt(v[1])
				if !ok {
					return nil, fmt.Errorf("%w: depth must be an integer, not %s", ErrExtPillar, pyfmt.TypeName(v[1]))
				}
				q.depth = d
			}
		case *payload.Map:
			qv, ok := v.Get("query")
			if !ok || !payload.Truthy(qv) {
				continue
			}
			q.query = pyfmt.Str(qv)
			if d, ok := v.Get("depth"); ok {
				n, ok := sqlInt(d)
				if !ok {
					return nil, fmt.Errorf("%w: depth must be an integer, not %s", ErrExtPillar, pyfmt.TypeName(d))
				}
				q.depth = n
			}
			for name, dst := range map[string]*bool{"as_list": &q.asList, "as_json": &q.asJSON, "ignore_null": &q.ignoreNull} {
				if x, ok := v.Get(name); ok {
					*dst = payload.Truthy(x)
				}
			}
			if wl, ok := v.Get("with_lists"); ok && payload.Truthy(wl) {
				switch w := wl.(type) {
				case string:
					for _, p := range strings.Split(w, ",") {
						n, err := strconv.Atoi(strings.TrimSpace(p))
						if err != nil {
							return nil, fmt.Errorf("%w: invalid literal for int() with base 10: %s", ErrExtPillar, pyfmt.Repr(p))
						}
						q.withLists = append(q.withLists, n)
					}
				case []any:
					for _, e := range w {
						if n, ok := sqlInt(e); ok {
							q.withLists = append(q.withLists, n)
						}
					}
				}
			}
		default:
			continue
		}
		out = append(out, q)
	}
	return out, nil
}

func sqlInt(v any) (int, bool) {
	switch x := v.(type) {
	case int64:
		return int(x), true
	case int:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		// a JSON-decoded configuration holds its ints as floats
		if x == float64(int(x)) {
			return int(x), true
		}
	}
	return 0, false
}

// sqlList is a list under construction (Python lists are shared by
// reference while the rows are merged).
type sqlList struct{ items []any }

// sqlBuilder is SqlBaseExtPillar's state while it merges rows.
type sqlBuilder struct {
	result *payload.Map
	focus  *payload.Map
}

// sqlFetch runs the queries through run and merges their rows (fetch).
func sqlFetch(ctx context.Context, minionID string, args []any, kwargs *payload.Map, log *slog.Logger,
	run func(ctx context.Context, query, minionID string) (sqlRows, error)) (any, error) {
	qs, err := sqlExtractQueries(args, kwargs)
	if err != nil {
		return nil, err
	}
	b := &sqlBuilder{result: payload.NewMap()}
	b.focus = b.result
	for _, q := range qs {
		res, err := run(ctx, q.query, minionID)
		if err != nil {
			if errors.Is(err, errSQLQuery) {
				// logged by the cursor's context manager; the with
				// block ends and fetch returns what it has
				log.Error("Error in ext_pillar", "error", err)
				break
			}
			return nil, err
		}
		if q.root != "" {
			b.focus = payload.NewMap()
			b.result.Set(q.root, b.focus)
		} else {
			b.focus = b.result
		}
		if err := b.process(q, res); err != nil {
			return nil, err
		}
	}
	return sqlPlain(b.result), nil
}

// sqlPlain turns the sqlList values into []any.
func sqlPlain(v any) any {
	switch x := v.(type) {
	case *sqlList:
		out := make([]any, len(x.items))
		for i, e := range x.items {
			out[i] = sqlPlain(e)
		}
		return out
	case *payload.Map:
		for _, it := range x.Items() {
			x.SetKey(it.Key, sqlPlain(it.Value))
		}
		return x
	}
	return v
}

func sqlContains(items []any, v any) bool {
	for _, e := range items {
		if pyfmt.Equal(e, v) {
			return true
		}
	}
	return false
}

// process is process_fields then process_results.
func (b *sqlBuilder) process(q sqlQuery, res sqlRows) error {
	n := len(res.fields)
	depth := q.depth
	if depth == 0 || depth >= n {
		depth = n - 1
	}
	in := func(i int) bool {
		for _, w := range q.withLists {
			if w == i {
				return true
			}
		}
		return false
	}
	listify := map[*payload.Map][]any{}
	var order []*payload.Map
	note := func(d *payload.Map, k any) {
		l, seen := listify[d]
		if !seen {
			order = append(order, d)
		}
		if !sqlContains(l, k) {
			l = append(l, k)
		}
		listify[d] = l
	}
	key := func(v any) any {
		if v == nil {
			return nil
		}
		return v
	}
	for _, ret := range res.rows {
		if len(ret) != n {
			return fmt.Errorf("%w: row has %d columns, not %d", ErrExtPillar, len(ret), n)
		}
		crd := b.focus
		if q.asJSON && n == 1 {
			if m, ok := ret[0].(*payload.Map); ok {
				merged, err := mergeRecurse(crd, m, q.asList)
				if err != nil {
					return err
				}
				if mm, ok := merged.(*payload.Map); ok && mm != crd {
					for _, it := range mm.Items() {
						crd.SetKey(it.Key, it.Value)
					}
				}
				continue
			}
			return fmt.Errorf("%w: '%s' object has no attribute 'items'", ErrExtPillar, pyfmt.TypeName(ret[0]))
		}
		for i := 0; i < depth-1; i++ {
			k := key(ret[i])
			if in(i + 1) {
				note(crd, k)
			}
			cur, ok := crd.GetKey(k)
			if !ok {
				next := payload.NewMap()
				crd.SetKey(k, next)
				crd = next
				continue
			}
			switch x := cur.(type) {
			case *sqlList:
				next := payload.NewMap()
				x.items = append(x.items, next)
				crd = next
			case *payload.Map:
				crd = x
			default:
				next := payload.NewMap()
				if q.asList {
					crd.SetKey(k, &sqlList{items: []any{cur, next}})
				} else {
					crd.SetKey(k, next)
				}
				crd = next
			}
		}
		if depth == n-1 {
			nk := n - 2
			k := key(ret[nk])
			cur, has := crd.GetKey(k)
			if (q.asList && has) || in(nk+1) {
				l, isList := cur.(*sqlList)
				if has && !isList {
					l = &sqlList{items: []any{cur}}
					crd.SetKey(k, l)
				} else if !has {
					l = &sqlList{}
					crd.SetKey(k, l)
				}
				l.items = append(l.items, ret[n-1])
			} else if !q.ignoreNull || ret[n-1] != nil {
				crd.SetKey(k, ret[n-1])
			}
			continue
		}
		k := key(ret[depth-1])
		if _, ok := crd.GetKey(k); !ok {
			crd.SetKey(k, payload.NewMap())
		}
		if in(depth) {
			note(crd, k)
		}
		cur, _ := crd.GetKey(k)
		next, ok := cur.(*payload.Map)
		if !ok {
			return fmt.Errorf("%w: '%s' object does not support item assignment", ErrExtPillar, sqlTypeName(cur))
		}
		crd = next
		for i := depth; i < n; i++ {
			nk := res.fields[i]
			if in(i + 1) {
				note(crd, nk)
			}
			cur, has := crd.Get(nk)
			if q.asList && has {
				if l, ok := cur.(*sqlList); ok {
					l.items = append(l.items, ret[i])
				} else {
					crd.Set(nk, &sqlList{items: []any{cur, ret[i]}})
				}
			} else if !q.ignoreNull || ret[i] != nil {
				crd.Set(nk, ret[i])
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		d := order[i]
		for _, k := range listify[d] {
			switch x := mustGet(d, k).(type) {
			case *payload.Map:
				vals := make([]any, 0, x.Len())
				for _, it := range x.Items() {
					vals = append(vals, it.Value)
				}
				d.SetKey(k, &sqlList{items: vals})
			case *sqlList:
				d.SetKey(k, &sqlList{items: []any{x}})
			}
		}
	}
	return nil
}

func mustGet(m *payload.Map, k any) any {
	v, _ := m.GetKey(k)
	return v
}

func sqlTypeName(v any) string {
	if _, ok := v.(*sqlList); ok {
		return "list"
	}
	return pyfmt.TypeName(v)
}
