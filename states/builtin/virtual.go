package builtin

import "github.com/gsalt/gsalt/states"

// saltVirtuals are Salt state modules gsalt does not implement whose
// __virtual__ loads them only when an execution function exists (none of
// these execution modules exists in gsalt): an SLS using them gets Salt's
// "'<module>' __virtual__ returned False: <reason>" rather than "is not
// available." (salt/states/mysql_*.py).
var saltVirtuals = map[string]states.Virtual{
	"mysql_database": {Needs: "mysql.db_exists", Reason: "mysql module could not be loaded"},
	"mysql_grants":   {Needs: "mysql.grant_exists", Reason: "mysql module could not be loaded"},
	"mysql_query":    {Needs: "mysql.query", Reason: "mysql module could not be loaded"},
	"mysql_user":     {Needs: "mysql.user_create", Reason: "mysql module could not be loaded"},
}

// registerVirtuals records saltVirtuals in r.
func registerVirtuals(r *states.Registry) {
	for mod, v := range saltVirtuals {
		r.RegisterVirtual(mod, v)
	}
}
