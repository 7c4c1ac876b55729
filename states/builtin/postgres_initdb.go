package builtin

// This file is Salt's postgres_initdb state module
// (salt/states/postgres_initdb.py): present initialises a PostgreSQL data
// directory with initdb through postgres.datadir_init.

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresInitdbStates() []states.Function {
	return []states.Function{
		{Name: "postgres_initdb.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", nil), sbOpt("password", nil), sbOpt("auth", "password"),
			sbOpt("encoding", "UTF8"), sbOpt("locale", nil), sbOpt("runas", nil), sbOpt("waldir", nil), sbOpt("checksums", false)}}, Fn: pgInitdbPresent},
	}
}

func pgInitdbPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("Postgres data directory %s is already present", name)}
	exists, err := pgExec(ctx, c, "postgres.datadir_exists", nil, "name", name)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(exists) {
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Postgres data directory %s is set to be initialized", name)
		return ret, nil
	}
	ok, err := pgExec(ctx, c, "postgres.datadir_init", []any{name}, "user", a.Get("user"), "password", a.Get("password"), "auth", a.Get("auth"),
		"encoding", a.Get("encoding"), "locale", a.Get("locale"), "waldir", a.Get("waldir"), "checksums", a.Get("checksums"), "runas", a.Get("runas"))
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("Postgres data directory %s has been initialized", name)
		ret.Changes.Set(name, "Present")
	} else {
		ret.Comment = fmt.Sprintf("Postgres data directory %s initialization failed", name)
		ret.Result = states.False
	}
	return ret, nil
}
