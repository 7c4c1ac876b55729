package builtin

// This file is Salt's postgres_privileges state module
// (salt/states/postgres_privileges.py): present (grant) and absent
// (revoke) of privileges on an object, or of membership in a group.

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresPrivilegesStates() []states.Function {
	tail := []modules.Param{sbOpt("prepend", "public"), sbOpt("maintenance_db", nil), sbOpt("user", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil), sbOpt("db_user", nil)}
	return []states.Function{
		{Name: "postgres_privileges.present", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbReq("object_name"), sbReq("object_type"),
			sbOpt("privileges", nil), sbOpt("grant_option", nil)}, tail...)}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pgPrivileges(ctx, c, true)
		}},
		{Name: "postgres_privileges.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbReq("object_name"), sbReq("object_type"),
			sbOpt("privileges", nil)}, tail...)}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pgPrivileges(ctx, c, false)
		}},
	}
}

// pgPrivileges is present (grant) or absent (revoke).
func pgPrivileges(ctx context.Context, c *states.Call, grant bool) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: "The requested privilege(s) are already set"}
	if !grant {
		ret.Comment = "The requested privilege(s) are not set so cannot be revoked"
	}
	// ",".join(privileges): a list's items, a string's characters
	var privileges any
	if p := a.Get("privileges"); payload.Truthy(p) {
		var parts []string
		switch x := p.(type) {
		case []any:
			for _, e := range x {
				parts = append(parts, pyfmt.Str(e))
			}
		default:
			parts = strings.Split(pyfmt.Str(x), "")
		}
		privileges = strings.Join(parts, ",")
	}
	kw := []any{"privileges", privileges}
	if grant {
		kw = append(kw, "grant_option", a.Get("grant_option"))
	}
	kw = append(kw, "prepend", a.Get("prepend"), "maintenance_db", a.Get("maintenance_db"), "runas", a.Get("user"), "host", a.Get("db_host"),
		"user", a.Get("db_user"), "port", a.Get("db_port"), "password", a.Get("db_password"))
	objName, objType := a.Get("object_name"), a.Get("object_type")
	has, err := pgExec(ctx, c, "postgres.has_privileges", []any{name, objName, objType}, kw...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(has) == grant {
		return ret, nil
	}
	privs := pyfmt.Str(privileges)
	if pyfmt.Str(objType) == "group" {
		privs = pyfmt.Str(objName)
	}
	verb, prep, fun, change := "granted", "to", "postgres.privileges_grant", "Present"
	if !grant {
		verb, prep, fun, change = "revoked", "from", "postgres.privileges_revoke", "Absent"
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("The privilege(s): %s are set to be %s %s %s", privs, verb, prep, name)
		return ret, nil
	}
	ok, err := pgExec(ctx, c, fun, []any{name, objName, objType}, kw...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("The privilege(s): %s have been %s %s %s", privs, verb, prep, name)
		ret.Changes.Set(name, change)
	} else {
		ret.Comment = fmt.Sprintf("Failed to %s privilege(s): %s %s %s", map[bool]string{true: "grant", false: "revoke"}[grant], privs, prep, name)
		ret.Result = states.False
	}
	return ret, nil
}
