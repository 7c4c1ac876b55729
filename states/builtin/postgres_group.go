package builtin

// This file is Salt's postgres_group state module
// (salt/states/postgres_group.py): present and absent, the role logic of
// postgres_user (pgRolePresent) for roles that cannot log in by default.

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
)

func postgresGroupStates() []states.Function {
	db := []modules.Param{sbOpt("user", nil), sbOpt("maintenance_db", nil), sbOpt("db_password", nil), sbOpt("db_host", nil), sbOpt("db_port", nil), sbOpt("db_user", nil)}
	present := append([]modules.Param{sbReq("name"), sbOpt("createdb", nil), sbOpt("createroles", nil), sbOpt("encrypted", nil), sbOpt("superuser", nil),
		sbOpt("inherit", nil), sbOpt("login", nil), sbOpt("replication", nil), sbOpt("password", nil), sbOpt("refresh_password", nil), sbOpt("groups", nil)}, db...)
	return []states.Function{
		{Name: "postgres_group.present", Spec: modules.Spec{Params: present}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pgRolePresent(ctx, c, "group")
		}},
		{Name: "postgres_group.absent", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name")}, db...)}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pgRoleAbsent(ctx, c, "group")
		}},
	}
}
