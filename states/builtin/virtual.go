package builtin

import "github.com/gsalt/gsalt/states"

// saltVirtuals are Salt state modules whose __virtual__ loads them only
// when an execution function exists: an SLS using them where it is missing
// gets Salt's "'<module>' __virtual__ returned False: <reason>" rather
// than "is not available.". The mysql ones gsalt does not implement (no
// mysql execution module; salt/states/mysql_*.py); cron it runs where the
// cron execution module loads, that is where crontab(1) is found
// (salt/states/cron.py); the postgres_* ones where the postgres execution
// module loads, that is where psql is found (salt/states/postgres_*.py);
// the NAPALM ones (salt.utils.napalm.virtual) where the NAPALM execution
// modules load, that is on a napalm proxy (gsalt-proxy's proxy/netmod);
// the docker_* ones gsalt does not implement (no docker execution module;
// salt/states/docker_*.py need docker.version).
var saltVirtuals = map[string]states.Virtual{
	"cron":                {Needs: "cron.list_tab", Reason: "cron module could not be loaded"},
	"iptables":            {Needs: "iptables.version", Reason: "iptables module could not be loaded"},
	"mysql_database":      {Needs: "mysql.db_exists", Reason: "mysql module could not be loaded"},
	"mysql_grants":        {Needs: "mysql.grant_exists", Reason: "mysql module could not be loaded"},
	"mysql_query":         {Needs: "mysql.query", Reason: "mysql module could not be loaded"},
	"mysql_user":          {Needs: "mysql.user_create", Reason: "mysql module could not be loaded"},
	"postgres_database":   {Needs: "postgres.user_exists", Reason: pgStateVirtualReason},
	"postgres_extension":  {Needs: "postgres.create_extension", Reason: pgStateVirtualReason},
	"postgres_group":      {Needs: "postgres.group_create", Reason: pgStateVirtualReason},
	"postgres_initdb":     {Needs: "postgres.datadir_init", Reason: pgStateVirtualReason},
	"postgres_language":   {Needs: "postgres.language_create", Reason: pgStateVirtualReason},
	"postgres_privileges": {Needs: "postgres.privileges_grant", Reason: pgStateVirtualReason},
	"postgres_schema":     {Needs: "postgres.schema_exists", Reason: pgStateVirtualReason},
	"postgres_tablespace": {Needs: "postgres.tablespace_exists", Reason: pgStateVirtualReason},
	"postgres_user":       {Needs: "postgres.user_exists", Reason: pgStateVirtualReason},
	"docker_container":    {Needs: "docker.version", Reason: dockerStateVirtualReason},
	"docker_image":        {Needs: "docker.version", Reason: dockerStateVirtualReason},
	"docker_network":      {Needs: "docker.version", Reason: dockerStateVirtualReason},
	"docker_volume":       {Needs: "docker.version", Reason: dockerStateVirtualReason},
	"netconfig":           {Needs: "net.load_template", Reason: napalmStateReason("netconfig")},
	"netntp":              {Needs: "ntp.set_peers", Reason: napalmStateReason("netntp")},
	"netsnmp":             {Needs: "snmp.update_config", Reason: napalmStateReason("netsnmp")},
	"netusers":            {Needs: "users.set_users", Reason: napalmStateReason("netusers")},
	"probes":              {Needs: "probes.set_probes", Reason: napalmStateReason("probes")},
}

// saltStatesDir is where Salt 3006's onedir packages install Salt's state
// modules: salt.utils.napalm.virtual names the module's file.
const saltStatesDir = "/opt/saltstack/salt/lib/python3.10/site-packages/salt/states/"

// napalmStateReason is what salt.utils.napalm.virtual says for state
// module mod away from a NAPALM (proxy) minion, with mod's file where
// Salt 3006's onedir package has it.
func napalmStateReason(mod string) string {
	return `"` + mod + `"" (` + saltStatesDir + mod + ".py) cannot be loaded: NAPALM is not installed: ``pip install napalm``"
}

// pgStateVirtualReason is what every postgres_* state module's __virtual__
// says when the postgres execution module did not load.
const pgStateVirtualReason = "Unable to load postgres module.  Make sure `postgres.bins_dir` is set."

// dockerStateVirtualReason is what the docker_* state modules' __virtual__
// says without the docker execution module (the loader's
// missing_fun_string for docker.version).
const dockerStateVirtualReason = "'docker.version' is not available."

// registerVirtuals records saltVirtuals in r.
func registerVirtuals(r *states.Registry) {
	for mod, v := range saltVirtuals {
		r.RegisterVirtual(mod, v)
	}
}
