package builtin

// This file is Salt's postgres_user state module
// (salt/states/postgres_user.py): present and absent over postgres.role_get,
// postgres.user_create, postgres.user_update and postgres.user_remove.

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresUserStates() []states.Function {
	db := []modules.Param{sbOpt("user", nil), sbOpt("maintenance_db", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil), sbOpt("db_user", nil)}
	present := append([]modules.Param{sbReq("name"), sbOpt("createdb", nil), sbOpt("createroles", nil), sbOpt("encrypted", nil), sbOpt("superuser", nil),
		sbOpt("replication", nil), sbOpt("inherit", nil), sbOpt("login", nil), sbOpt("password", nil), sbOpt("default_password", nil),
		sbOpt("refresh_password", nil), sbOpt("valid_until", nil), sbOpt("groups", nil)}, db...)
	return []states.Function{
		{Name: "postgres_user.present", Spec: modules.Spec{Params: present}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pgRolePresent(ctx, c, "user")
		}},
		{Name: "postgres_user.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name")}, db...)}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pgRoleAbsent(ctx, c, "user")
		}},
	}
}

// pgRolePresent is postgres_user.present and postgres_group.present (typ
// "user" or "group").
func pgRolePresent(ctx context.Context, c *states.Call, typ string) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	title := strings.ToUpper(typ[:1]) + typ[1:]
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("%s %s is already present", title, name)}
	dbArgs := pgStateDBArgs(c)
	encrypted := a.Get("encrypted")
	if encrypted == nil {
		encrypted = mbuiltin.PostgresDefaultEncryption
	}
	refresh := payload.Truthy(a.Get("refresh_password"))
	mode := "create"
	attr, err := pgExec(ctx, c, "postgres.role_get", []any{name}, append([]any{"return_password", !refresh}, dbArgs...)...)
	if err != nil {
		return ret, err
	}
	if attr != nil {
		mode = "update"
	}
	password := a.Get("password")
	if typ == "user" && mode == "create" && password == nil {
		password = a.Get("default_password")
	}
	if password != nil {
		if mode == "update" && !refresh && mbuiltin.PostgresVerifyPassword(name, password, pgMapGet(attr, "password"), encrypted) {
			password = nil
		} else if password, err = mbuiltin.PostgresMaybeEncrypt(sbLog(c), name, password, encrypted); err != nil {
			return ret, err
		}
	}
	update := &payload.Map{}
	if mode == "update" {
		for _, f := range [][2]string{{"createdb", "can create databases"}, {"inherit", "inherits privileges"}, {"login", "can login"},
			{"createroles", "can create roles"}, {"replication", "replication"}, {"superuser", "superuser"}} {
			if v := a.Get(f[0]); v != nil && !pgPyEq(pgMapGet(attr, f[1]), v) {
				update.Set(f[0], v)
			}
		}
		if password != nil {
			update.Set("password", true)
		}
		if vu := a.Get("valid_until"); typ == "user" && vu != nil {
			q := fmt.Sprintf("SELECT '%s'::timestamp(0) as dt;", strings.ReplaceAll(pyfmt.Str(vu), "'", "''"))
			rows, err := pgExec(ctx, c, "postgres.psql_query", []any{q}, dbArgs...)
			if err != nil {
				return ret, err
			}
			l, _ := rows.([]any)
			if len(l) == 0 {
				return ret, &modules.PyException{Class: "IndexError", Message: "list index out of range"}
			}
			var dt any
			if t, ok := mbuiltin.PostgresTimestamp(pyfmt.Str(pgMapGet(l[0], "dt"))); ok {
				dt = t
			}
			if !pgPyEq(dt, pgMapGet(attr, "expiry time")) {
				update.Set("valid_until", vu)
			}
		}
		if groups := a.Get("groups"); groups != nil {
			var lgroups []any
			switch g := groups.(type) {
			case string:
				for _, s := range strings.Split(g, ",") {
					lgroups = append(lgroups, s)
				}
			case []any:
				lgroups = g
			}
			var missing []any
			have := pgMapGet(attr, "groups")
			for _, g := range lgroups {
				if !pgHas(have, pyfmt.Str(g)) {
					missing = append(missing, g)
				}
			}
			if len(missing) > 0 {
				update.Set("groups", missing)
			}
		}
	}
	var cret any
	if mode == "create" || update.Len() > 0 {
		if c.Test {
			if update.Len() > 0 {
				ret.Changes.Set(name, update)
			}
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("%s %s is set to be %sd", title, name, mode)
			return ret, nil
		}
		kw := []any{typ + "name", name, "createdb", a.Get("createdb"), "createroles", a.Get("createroles"), "encrypted", encrypted,
			"superuser", a.Get("superuser"), "login", a.Get("login"), "inherit", a.Get("inherit"), "replication", a.Get("replication"),
			"rolepassword", password}
		if typ == "user" {
			kw = append(kw, "valid_until", a.Get("valid_until"))
		}
		kw = append(append(kw, "groups", a.Get("groups")), dbArgs...)
		if cret, err = pgExec(ctx, c, "postgres."+typ+"_"+mode, nil, kw...); err != nil {
			return ret, err
		}
	}
	switch {
	case payload.Truthy(cret):
		ret.Comment = fmt.Sprintf("The %s %s has been %sd", typ, name, mode)
		if update.Len() > 0 {
			ret.Changes.Set(name, update)
		} else {
			ret.Changes.Set(name, "Present")
		}
	case cret != nil:
		ret.Comment = fmt.Sprintf("Failed to %s %s %s", mode, typ, name)
		ret.Result = states.False
	}
	return ret, nil
}

// pgRoleAbsent is postgres_user.absent and postgres_group.absent.
func pgRoleAbsent(ctx context.Context, c *states.Call, typ string) (states.Ret, error) {
	name := sbName(c)
	title := strings.ToUpper(typ[:1]) + typ[1:]
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	dbArgs := pgStateDBArgs(c)
	exists, err := pgExec(ctx, c, "postgres.user_exists", []any{name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(exists) {
		ret.Comment = fmt.Sprintf("%s %s is not present, so it cannot be removed", title, name)
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("%s %s is set to be removed", title, name)
		return ret, nil
	}
	ok, err := pgExec(ctx, c, "postgres."+typ+"_remove", []any{name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("%s %s has been removed", title, name)
		ret.Changes.Set(name, "Absent")
		return ret, nil
	}
	ret.Result = states.False
	ret.Comment = fmt.Sprintf("%s %s failed to be removed", title, name)
	return ret, nil
}
