package builtin

// Helpers shared by the postgres_* state modules (Salt's
// salt/states/postgres_*.py): calling the postgres execution module with
// the db_* connection arguments, and Python's == for the role attributes
// the states compare.

import (
	"context"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// pgStateDBArgs is the db_args dict most postgres states pass on:
// maintenance_db, runas (the state's user), host, user, port, password.
func pgStateDBArgs(c *states.Call) []any {
	a := c.Args
	return []any{"maintenance_db", a.Get("maintenance_db"), "runas", a.Get("user"), "host", a.Get("db_host"),
		"user", a.Get("db_user"), "port", a.Get("db_port"), "password", a.Get("db_password")}
}

// pgExec is __salt__[fun](*args, **kwargs) with kwargs as name/value pairs.
func pgExec(ctx context.Context, c *states.Call, fun string, args []any, kw ...any) (any, error) {
	return sbExec(ctx, c, fun, args, payload.NewMap(kw...))
}

// pgPyEq is Python's == for the scalar values role attributes hold
// (True == 1, None only equals None).
func pgPyEq(a, b any) bool {
	num := func(v any) (int64, bool) {
		switch x := v.(type) {
		case bool:
			if x {
				return 1, true
			}
			return 0, true
		case int64:
			return x, true
		case int:
			return int64(x), true
		}
		return 0, false
	}
	if x, ok := num(a); ok {
		y, ok2 := num(b)
		return ok2 && x == y
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if ta, ok := a.(time.Time); ok {
		tb, ok2 := b.(time.Time)
		return ok2 && ta.Equal(tb)
	}
	return pyfmt.Repr(a) == pyfmt.Repr(b)
}

// pgMapGet is d.get(key) of a ret dict (nil when d is not a dict).
func pgMapGet(d any, key string) any {
	if m, ok := d.(*payload.Map); ok {
		v, _ := m.Get(key)
		return v
	}
	return nil
}

// pgHas reports whether a list holds s.
func pgHas(l any, s string) bool {
	items, _ := l.([]any)
	for _, it := range items {
		if pyfmt.Str(it) == s {
			return true
		}
	}
	return false
}
