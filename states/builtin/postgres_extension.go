package builtin

// This file is Salt's postgres_extension state module
// (salt/states/postgres_extension.py): present (install, or move/upgrade
// an installed extension) and absent.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func postgresExtensionStates() []states.Function {
	db := []modules.Param{sbOpt("user", nil), sbOpt("maintenance_db", nil), sbOpt("db_user", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil)}
	return []states.Function{
		{Name: "postgres_extension.present", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("if_not_exists", nil), sbOpt("schema", nil),
			sbOpt("ext_version", nil), sbOpt("from_version", nil)}, db...)}, Fn: pgExtensionPresent},
		{Name: "postgres_extension.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("if_exists", nil), sbOpt("restrict", nil),
			sbOpt("cascade", nil)}, db...)}, Fn: pgExtensionAbsent},
	}
}

func pgExtensionPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("Extension %s is already present", name)}
	dbArgs := pgStateDBArgs(c)
	v, err := pgExec(ctx, c, "postgres.create_metadata", []any{name}, append([]any{"schema", a.Get("schema"), "ext_version", a.Get("ext_version")}, dbArgs...)...)
	if err != nil {
		return ret, err
	}
	md, _ := v.([]any)
	mode := "create"
	toinstall := slices.Contains(md, any(mbuiltin.PostgresExtNotInstalled))
	if toinstall {
		mode = "install"
	}
	toupgrade := false
	if slices.Contains(md, any(mbuiltin.PostgresExtInstalled)) &&
		(slices.Contains(md, any(mbuiltin.PostgresExtToMove)) || slices.Contains(md, any(mbuiltin.PostgresExtToUpgrade))) {
		toupgrade, mode = true, "upgrade"
	}
	if !toinstall && !toupgrade {
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = strings.ReplaceAll(fmt.Sprintf("Extension %s is set to be %sed", name, mode), "eed", "ed")
		return ret, nil
	}
	cret, err := pgExec(ctx, c, "postgres.create_extension", nil, append([]any{"name", name, "if_not_exists", a.Get("if_not_exists"), "schema", a.Get("schema"),
		"ext_version", a.Get("ext_version"), "from_version", a.Get("from_version")}, dbArgs...)...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(cret) {
		suffix := "ed"
		if strings.HasSuffix(mode, "e") {
			suffix = "d"
		}
		ret.Comment = fmt.Sprintf("The extension %s has been %s%s", name, mode, suffix)
		ret.Changes.Set(name, strings.ToUpper(mode[:1])+mode[1:]+suffix)
	} else if cret != nil {
		ret.Comment = fmt.Sprintf("Failed to %s extension %s", mode, name)
		ret.Result = states.False
	}
	return ret, nil
}

func pgExtensionAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	dbArgs := pgStateDBArgs(c)
	exists, err := pgExec(ctx, c, "postgres.is_installed_extension", []any{name}, dbArgs...)
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(exists) {
		ret.Comment = fmt.Sprintf("Extension %s is not present, so it cannot be removed", name)
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Extension %s is set to be removed", name)
		return ret, nil
	}
	ok, err := pgExec(ctx, c, "postgres.drop_extension", []any{name}, append([]any{"if_exists", a.Get("if_exists"), "restrict", a.Get("restrict"),
		"cascade", a.Get("cascade")}, dbArgs...)...)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("Extension %s has been removed", name)
		ret.Changes.Set(name, "Absent")
		return ret, nil
	}
	ret.Result = states.False
	ret.Comment = fmt.Sprintf("Extension %s failed to be removed", name)
	return ret, nil
}
