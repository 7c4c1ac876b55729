package builtin

import "github.com/gsalt/gsalt/states"

// saltVirtuals are Salt state modules whose __virtual__ loads them only
// when an execution function exists: an SLS using them where it is missing
// gets Salt's "'<module>' __virtual__ returned False: <reason>" rather
// than "is not available.". The mysql ones gsalt does not implement (no
// mysql execution module; salt/states/mysql_*.py); cron it runs where the
// cron execution module loads, that is where crontab(1) is found
// (salt/states/cron.py).
var saltVirtuals = map[string]states.Virtual{
	"cron":           {Needs: "cron.list_tab", Reason: "cron module could not be loaded"},
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
