package builtin

// This file is Salt's postgres_schema state module
// (salt/states/postgres_schema.py): present and absent of a schema in a
// database; the ret carries the database as "dbname" like Salt's.

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresSchemaStates() []states.Function {
	db := []modules.Param{sbOpt("user", nil), sbOpt("db_user", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil)}
	return []states.Function{
		{Name: "postgres_schema.present", Spec: modules.Spec{Params: append([]modules.Param{sbReq("dbname"), sbReq("name"), sbOpt("owner", nil)}, db...)}, Fn: pgSchemaPresent},
		{Name: "postgres_schema.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("dbname"), sbReq("name")}, db...)}, Fn: pgSchemaAbsent},
	}
}

func pgSchemaDBArgs(c *states.Call) []any {
	a := c.Args
	return []any{"db_user", a.Get("db_user"), "db_password", a.Get("db_password"), "db_host", a.Get("db_host"), "db_port", a.Get("db_port"), "user", a.Get("user")}
}

func pgSchemaPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	dbname := pyfmt.Str(c.Args.Get("dbname"))
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Extra: payload.NewMap("dbname", c.Args.Get("dbname"))}
	dbArgs := pgSchemaDBArgs(c)
	attr, err := pgExec(ctx, c, "postgres.schema_get", []any{c.Args.Get("dbname"), name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	var cret any
	if attr == nil {
		if c.Test {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Schema %s is set to be created in database %s.", name, dbname)
			return ret, nil
		}
		if cret, err = pgExec(ctx, c, "postgres.schema_create", []any{c.Args.Get("dbname"), name}, append([]any{"owner", c.Args.Get("owner")}, dbArgs...)...); err != nil {
			return ret, err
		}
	}
	msg := "Schema %s already exists in database %s"
	switch {
	case payload.Truthy(cret):
		msg = "Schema %s has been created in database %s"
		ret.Changes.Set(name, "Present")
	case cret != nil:
		msg = "Failed to create schema %s in database %s"
		ret.Result = states.False
	}
	ret.Comment = fmt.Sprintf(msg, name, dbname)
	return ret, nil
}

func pgSchemaAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	dbname := pyfmt.Str(c.Args.Get("dbname"))
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Extra: payload.NewMap("dbname", c.Args.Get("dbname"))}
	dbArgs := pgSchemaDBArgs(c)
	exists, err := pgExec(ctx, c, "postgres.schema_exists", []any{c.Args.Get("dbname"), name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(exists) {
		ret.Comment = fmt.Sprintf("Schema %s is not present in database %s, so it cannot be removed", name, dbname)
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Schema %s is set to be removed from database %s", name, dbname)
		return ret, nil
	}
	ok, err := pgExec(ctx, c, "postgres.schema_remove", []any{c.Args.Get("dbname"), name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("Schema %s has been removed from database %s", name, dbname)
		ret.Changes.Set(name, "Absent")
		return ret, nil
	}
	ret.Result = states.False
	ret.Comment = fmt.Sprintf("Schema %s failed to be removed", name)
	return ret, nil
}
