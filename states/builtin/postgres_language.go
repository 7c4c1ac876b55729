package builtin

// This file is Salt's postgres_language state module
// (salt/states/postgres_language.py): present and absent of a procedural
// language in a database. absent calls postgres.language_remove without
// the database, as Salt 3006 does (a TypeError there too).

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresLanguageStates() []states.Function {
	params := []modules.Param{sbReq("name"), sbReq("maintenance_db"), sbOpt("user", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil), sbOpt("db_user", nil)}
	return []states.Function{
		{Name: "postgres_language.present", Spec: modules.Spec{Params: params}, Fn: pgLanguagePresent},
		{Name: "postgres_language.absent", Spec: modules.Spec{Params: params}, Fn: pgLanguageAbsent},
	}
}

func pgLanguageDBArgs(c *states.Call) []any {
	a := c.Args
	return []any{"runas", a.Get("user"), "host", a.Get("db_host"), "user", a.Get("db_user"), "port", a.Get("db_port"), "password", a.Get("db_password")}
}

func pgLanguagePresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	db := c.Args.Get("maintenance_db")
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("Language %s is already installed", name)}
	v, err := pgExec(ctx, c, "postgres.language_list", []any{db}, pgLanguageDBArgs(c)...)
	if err != nil {
		return ret, err
	}
	if m, ok := v.(*payload.Map); ok && m.Has(name) {
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Language %s is set to be installed", name)
		return ret, nil
	}
	ok, err := pgExec(ctx, c, "postgres.language_create", []any{name, db}, pgLanguageDBArgs(c)...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("Language %s has been installed", name)
		ret.Changes.Set(name, "Present")
	} else {
		ret.Comment = fmt.Sprintf("Failed to install language %s", name)
		ret.Result = states.False
	}
	return ret, nil
}

func pgLanguageAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	exists, err := pgExec(ctx, c, "postgres.language_exists", []any{name, c.Args.Get("maintenance_db")}, pgLanguageDBArgs(c)...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(exists) {
		if c.Test {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Language %s is set to be removed", name)
			return ret, nil
		}
		ok, err := pgExec(ctx, c, "postgres.language_remove", []any{name}, pgLanguageDBArgs(c)...)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Comment = fmt.Sprintf("Language %s has been removed", name)
			ret.Changes.Set(name, "Absent")
			return ret, nil
		}
		ret.Result = states.False
	}
	ret.Comment = fmt.Sprintf("Language %s is not present so it cannot be removed", name)
	return ret, nil
}
