package builtin

// This file is Salt's postgres_database state module
// (salt/states/postgres_database.py): present (create, or change the owner
// and tablespace; encoding and locales cannot change) and absent.

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresDatabaseStates() []states.Function {
	db := []modules.Param{sbOpt("user", nil), sbOpt("maintenance_db", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil), sbOpt("db_user", nil)}
	present := append([]modules.Param{sbReq("name"), sbOpt("tablespace", nil), sbOpt("encoding", nil), sbOpt("lc_collate", nil), sbOpt("lc_ctype", nil),
		sbOpt("owner", nil), sbOpt("owner_recurse", false), sbOpt("template", nil)}, db...)
	return []states.Function{
		{Name: "postgres_database.present", Spec: modules.Spec{Params: present}, Fn: pgDatabasePresent},
		{Name: "postgres_database.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name")}, db...)}, Fn: pgDatabaseAbsent},
	}
}

func pgDatabasePresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("Database %s is already present", name)}
	dbArgs := pgStateDBArgs(c)
	v, err := pgExec(ctx, c, "postgres.db_list", nil, dbArgs...)
	if err != nil {
		return ret, err
	}
	dbs, _ := v.(*payload.Map)
	if dbs == nil {
		dbs = &payload.Map{}
	}
	params, exists := dbs.Get(name)
	get := func(k string) any { return pgMapGet(params, k) }
	lower := func(v any) string { return strings.ToLower(pyfmt.Str(v)) }
	ts, enc, coll, ctyp, owner := a.Get("tablespace"), a.Get("encoding"), a.Get("lc_collate"), a.Get("lc_ctype"), a.Get("owner")
	same := func(given any, key string) bool { return !payload.Truthy(given) || pgPyEq(get(key), given) }
	if exists && same(ts, "Tablespace") && (!payload.Truthy(enc) || lower(get("Encoding")) == lower(enc)) &&
		same(coll, "Collate") && same(ctyp, "Ctype") && same(owner, "Owner") {
		return ret, nil
	}
	if exists && ((payload.Truthy(enc) && lower(get("Encoding")) != lower(enc)) || !same(coll, "Collate") || !same(ctyp, "Ctype")) {
		ret.Comment = fmt.Sprintf("Database %s has wrong parameters which couldn't be changed on fly.", name)
		ret.Result = states.False
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		if !exists {
			ret.Comment = fmt.Sprintf("Database %s is set to be created", name)
		} else {
			ret.Comment = fmt.Sprintf("Database %s exists, but parameters need to be changed", name)
		}
		return ret, nil
	}
	if !exists {
		ok, err := pgExec(ctx, c, "postgres.db_create", []any{name}, append([]any{"tablespace", ts, "encoding", enc, "lc_collate", coll,
			"lc_ctype", ctyp, "owner", owner, "template", a.Get("template")}, dbArgs...)...)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Comment = fmt.Sprintf("The database %s has been created", name)
			ret.Changes.Set(name, "Present")
			return ret, nil
		}
		ret.Comment = fmt.Sprintf("Failed to create database %s", name)
		ret.Result = states.False
		return ret, nil
	}
	ok, err := pgExec(ctx, c, "postgres.db_alter", []any{name}, append([]any{"tablespace", ts, "owner", owner, "owner_recurse", a.Get("owner_recurse")}, dbArgs...)...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("Parameters for database %s have been changed", name)
		ret.Changes.Set(name, "Parameters changed")
		return ret, nil
	}
	ret.Comment = fmt.Sprintf("Failed to change parameters for database %s", name)
	ret.Result = states.False
	return ret, nil
}

func pgDatabaseAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	return pgObjectAbsent(ctx, c, "Database", "postgres.db_exists", "postgres.db_remove")
}

// pgObjectAbsent is the absent state of the objects Salt removes the same
// way (databases, tablespaces): check with existsFn, remove with
// removeFn; kind starts the comments.
func pgObjectAbsent(ctx context.Context, c *states.Call, kind, existsFn, removeFn string) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	dbArgs := pgStateDBArgs(c)
	exists, err := pgExec(ctx, c, existsFn, []any{name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(exists) {
		if c.Test {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("%s %s is set to be removed", kind, name)
			return ret, nil
		}
		ok, err := pgExec(ctx, c, removeFn, []any{name}, dbArgs...)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Comment = fmt.Sprintf("%s %s has been removed", kind, name)
			ret.Changes.Set(name, "Absent")
			return ret, nil
		}
	}
	ret.Comment = fmt.Sprintf("%s %s is not present, so it cannot be removed", kind, name)
	return ret, nil
}
