package builtin

// This file is Salt's postgres_tablespace state module
// (salt/states/postgres_tablespace.py): present (create; fix the owner and
// options of an existing tablespace, whose location cannot change) and
// absent. As in Salt, the owner and option changes go through
// postgres.tablespace_alter on the default connection, and the owner
// change runs even under test=True.

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresTablespaceStates() []states.Function {
	db := []modules.Param{sbOpt("user", nil), sbOpt("maintenance_db", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil), sbOpt("db_user", nil)}
	absentDB := []modules.Param{sbOpt("user", nil), sbOpt("maintenance_db", nil), sbOpt("db_user", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil)}
	return []states.Function{
		{Name: "postgres_tablespace.present", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbReq("directory"), sbOpt("options", nil), sbOpt("owner", nil)}, db...)},
			Fn: pgTablespacePresent},
		{Name: "postgres_tablespace.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name")}, absentDB...)}, Fn: pgTablespaceAbsent},
	}
}

func pgTablespacePresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("Tablespace %s is already present", name)}
	dbArgs := pgStateDBArgs(c)
	v, err := pgExec(ctx, c, "postgres.tablespace_list", nil, dbArgs...)
	if err != nil {
		return ret, err
	}
	tss, _ := v.(*payload.Map)
	if tss == nil {
		tss = &payload.Map{}
	}
	dir, owner, options := a.Get("directory"), a.Get("owner"), a.Get("options")
	if _, ok := tss.Get(name); !ok {
		if c.Test {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Tablespace %s is set to be created", name)
			return ret, nil
		}
		ok, err := pgExec(ctx, c, "postgres.tablespace_create", []any{name, dir, options, owner}, dbArgs...)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Comment = fmt.Sprintf("The tablespace %s has been created", name)
			ret.Changes.Set(name, "Present")
			return ret, nil
		}
		// Salt then looks the missing tablespace up
		return ret, &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(name)}
	}
	ts, _ := tss.Get(name)
	if !pgPyEq(pgMapGet(ts, "Location"), dir) && !c.Test {
		ret.Comment = fmt.Sprintf("Tablespace %s is not at the right location. This is\n            unfixable without dropping and recreating the tablespace.", name)
		ret.Result = states.False
		return ret, nil
	}
	if payload.Truthy(owner) && !pgPyEq(pgMapGet(ts, "Owner"), owner) {
		if c.Test {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Tablespace %s owner to be altered", name)
		}
		ok, err := pgExec(ctx, c, "postgres.tablespace_alter", []any{name}, "new_owner", owner)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) && !c.Test {
			ret.Comment = fmt.Sprintf("Tablespace %s owner changed", name)
			ret.Changes.Set(name, payload.NewMap("owner", owner))
			ret.Result = states.True
		}
	}
	if opts, ok := options.(*payload.Map); ok && opts.Len() > 0 {
		for _, it := range opts.Items() {
			if strings.Contains(pyfmt.Str(pgMapGet(ts, "Opts")), fmt.Sprintf("%s=%s", pyfmt.Str(it.Key), pyfmt.Str(it.Value))) {
				continue
			}
			if c.Test {
				ret.Result = states.None
				ret.Comment = fmt.Sprintf("Tablespace %s options to be\n                        altered", name)
				break
			}
			ok, err := pgExec(ctx, c, "postgres.tablespace_alter", []any{name}, "set_option", payload.NewMap(pyfmt.Str(it.Key), it.Value))
			if err != nil {
				return ret, err
			}
			if payload.Truthy(ok) {
				ret.Comment = fmt.Sprintf("Tablespace %s opts changed", name)
				cur, _ := ret.Changes.Get(name)
				cm, isMap := cur.(*payload.Map)
				if !isMap {
					cm = &payload.Map{}
					ret.Changes.Set(name, cm)
				}
				om, _ := pgMapGet(cm, "options").(*payload.Map)
				if om == nil {
					om = &payload.Map{}
					cm.Set("options", om)
				}
				om.SetKey(it.Key, it.Value)
				ret.Result = states.True
			}
		}
	}
	return ret, nil
}

func pgTablespaceAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	return pgObjectAbsent(ctx, c, "Tablespace", "postgres.tablespace_exists", "postgres.tablespace_remove")
}
