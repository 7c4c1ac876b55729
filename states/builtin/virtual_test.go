package builtin

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestVirtualStatesGolden compares, with Salt 3006
// (testdata/golden/virtual_states.json), what state.sls says for
// state modules whose __virtual__ refuses to load (the mysql states
// without a mysql module, the docker states without a docker module) and for a module that does not exist at all.
func TestVirtualStatesGolden(t *testing.T) {
	srv := map[string]string{
		"virt/user.sls":    "salt:\n  mysql_user.present: []\n",
		"virt/all.sls":     "db1:\n  mysql_database.present: []\ng:\n  mysql_grants.present:\n    - grant: all\n    - database: db1.*\n    - user: salt\nq:\n  mysql_query.run:\n    - database: db1\n    - query: SELECT 1\n",
		"virt/unknown.sls": "x:\n  gsalt_nosuch.present: []\ny:\n  file.gsalt_nosuch: []\n",
		"virt/mixed.sls":   "ok:\n  test.succeed_without_changes: []\nsalt:\n  mysql_user.absent: []\n",
		"virt/docker.sls":  "etcd:\n  docker_container.running:\n    - image: quay.io/coreos/etcd\nimg:\n  docker_image.present: []\nnet:\n  docker_network.present: []\nvol:\n  docker_volume.present: []\n",
	}
	sls := func(name string, test bool, mods string) salttest.Call {
		c := salttest.Call{Name: name, Fun: "state.sls", Args: []any{mods}}
		if test {
			c.Kwargs = []any{"test", true}
		}
		return c
	}
	calls := []salttest.Call{
		sls("mysql_user", false, "virt.user"),
		sls("mysql_user test", true, "virt.user"),
		sls("mysql modules", false, "virt.all"),
		sls("unknown module and function", false, "virt.unknown"),
		sls("mixed", false, "virt.mixed"),
		sls("docker modules", false, "virt.docker"),
		sls("docker modules test", true, "virt.docker"),
	}
	salttest.Run(t, salttest.Suite{Name: "virtual_states", Calls: calls, Srv: srv, Grains: payloadLinuxGrains(), Normalize: untimedRets}, suiteRegistry(t))
}

// TestCronVirtualGolden compares with Salt 3006
// (testdata/golden/virtual_cron.json) what a minion without crontab(1)
// says: Salt's cron execution module refuses to load ("Cannot load cron
// module: crontab command not found"), so the cron state module refuses
// too ("cron module could not be loaded") and every cron state of an SLS
// is "not found", in test mode and not, beside states that still run.
// gsalt's module searches PATH only here (Salt's which also looks in
// /usr/bin and the other standard directories: the golden file is made on
// a machine without crontab there).
func TestCronVirtualGolden(t *testing.T) {
	skipWhereSaltFinds(t, "crontab", "Salt would load its cron module; regenerate on a machine without crontab(1)")
	t.Setenv("PATH", t.TempDir())
	srv := map[string]string{
		"cronv/jobs.sls": "job:\n  cron.present:\n    - name: /usr/bin/true\n    - user: root\n    - minute: 5\n" +
			"gone:\n  cron.absent:\n    - name: /usr/bin/false\n" +
			"path:\n  cron.env_present:\n    - name: PATH\n    - value: /bin\n" +
			"ok:\n  test.succeed_without_changes: []\n" +
			"after:\n  test.succeed_with_changes:\n    - require:\n      - cron: job\n",
	}
	calls := []salttest.Call{
		{Name: "sys.list_functions cron", Fun: "sys.list_functions", Args: []any{"cron"}},
		{Name: "state.sls", Fun: "state.sls", Args: []any{"cronv.jobs"}},
		{Name: "state.sls test", Fun: "state.sls", Args: []any{"cronv.jobs"}, Kwargs: []any{"test", true}},
		{Name: "state.single", Fun: "state.single", Args: []any{"cron.present", "/bin/true"}, Kwargs: []any{"user", "root"}},
	}
	reg := suiteRegistry(t)
	reg.SetVirtual("cron", mbuiltin.CommandVirtual("crontab", mbuiltin.ErrCrontabNotFound, nil))
	salttest.Run(t, salttest.Suite{Name: "virtual_cron", Calls: calls, Srv: srv, Grains: payloadLinuxGrains(), Normalize: untimedRets}, reg)
}

// skipWhereSaltFinds skips a golden regeneration (-update-golden) when
// exe is an executable file in one of the folders Salt's which adds to
// PATH (Salt's module would then load); why says what to do.
func skipWhereSaltFinds(t *testing.T, exe, why string) {
	t.Helper()
	if f := flag.Lookup("update-golden"); f == nil || f.Value.String() != "true" {
		return
	}
	for _, d := range []string{"/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		if st, err := os.Stat(filepath.Join(d, exe)); err == nil && st.Mode().IsRegular() {
			t.Skipf("%s is in %s: %s", exe, d, why)
		}
	}
}

// untimedRets keeps a state.sls return without its rets' timings.
func untimedRets(_ string, v any) any {
	if m, ok := v.(*payload.Map); ok {
		for _, it := range m.Items() {
			if r, ok := it.Value.(*payload.Map); ok {
				r.Delete("start_time")
				r.Delete("duration")
			}
		}
	}
	return v
}

// TestPostgresVirtualGolden compares with Salt 3006
// (testdata/golden/virtual_postgres.json) what a minion without psql(1)
// says: Salt's postgres execution module refuses to load ("psql was not
// found"), so every postgres_* state module refuses too ("Unable to load
// postgres module.  Make sure `postgres.bins_dir` is set.") and each
// postgres state of an SLS is "not found", in test mode and not, beside
// states that still run. (postgres_cluster is left out: Salt's deb_postgres
// module, which gsalt does not have, gives it postgres.cluster_* where
// pg_createcluster is installed.) Salt's which also looks in /usr/bin: the golden
// file is made with psql hidden there, e.g. in a private mount namespace:
//
//	unshare -m sh -c 'mount --bind /dev/null "$(readlink -f /usr/bin/psql)" &&
//	  GSALT_SALT_SRC=... go test -run TestPostgresVirtualGolden -update-golden ./states/builtin'
func TestPostgresVirtualGolden(t *testing.T) {
	skipWhereSaltFinds(t, "psql", "Salt would load its postgres module; regenerate with psql hidden (see the comment)")
	t.Setenv("PATH", t.TempDir())
	srv := map[string]string{
		"pgv/all.sls": "app:\n  postgres_user.present:\n    - password: secret\n" +
			"appdb:\n  postgres_database.present:\n    - owner: app\n    - require:\n      - postgres_user: app\n" +
			"admins:\n  postgres_group.absent: []\n" +
			"ext:\n  postgres_extension.present:\n    - name: hstore\n    - maintenance_db: appdb\n" +
			"sch:\n  postgres_schema.present:\n    - dbname: appdb\n" +
			"lang:\n  postgres_language.present:\n    - name: plpgsql\n    - maintenance_db: appdb\n" +
			"ts:\n  postgres_tablespace.absent: []\n" +
			"priv:\n  postgres_privileges.present:\n    - name: app\n    - object_name: appdb\n    - object_type: database\n    - privileges: [CONNECT]\n" +
			"init:\n  postgres_initdb.present:\n    - name: /srv/pgdata\n" +
			"ok:\n  test.succeed_without_changes: []\n",
	}
	calls := []salttest.Call{
		{Name: "state.sls", Fun: "state.sls", Args: []any{"pgv.all"}},
		{Name: "state.sls test", Fun: "state.sls", Args: []any{"pgv.all"}, Kwargs: []any{"test", true}},
		{Name: "state.single", Fun: "state.single", Args: []any{"postgres_user.present", "app"}},
		{Name: "state.single database", Fun: "state.single", Args: []any{"postgres_database.absent", "appdb"}, Kwargs: []any{"test", true}},
	}
	reg := suiteRegistry(t)
	reg.SetVirtual("postgres", mbuiltin.CommandVirtual("psql", mbuiltin.ErrPsqlNotFound, nil))
	salttest.Run(t, salttest.Suite{Name: "virtual_postgres", Calls: calls, Srv: srv, Grains: payloadLinuxGrains(), Normalize: untimedRets}, reg)
}

// TestNapalmVirtualGolden compares with Salt 3006
// (testdata/golden/virtual_napalm.json) what a minion that is not a NAPALM
// proxy says of the NAPALM state modules (netntp, netsnmp, netusers,
// probes, netconfig): salt.utils.napalm.virtual refuses them ("... cannot
// be loaded: NAPALM is not installed"), so each of their states is "not
// found", in test mode and not, beside states that still run.
// salt.utils.napalm.virtual names the module's file: the comparison puts
// SALT/ for the folder Salt is installed in (napalmFileNormalize).
func TestNapalmVirtualGolden(t *testing.T) {
	srv := map[string]string{
		"napv/all.sls": "ntp:\n  netntp.managed:\n    - peers: [10.0.0.1]\n" +
			"snmp:\n  netsnmp.managed:\n    - config: {location: here}\n" +
			"users:\n  netusers.managed:\n    - users: {admin: {level: 15}}\n" +
			"probes:\n  probes.managed:\n    - probes: {}\n" +
			"cfg:\n  netconfig.managed:\n    - template_name: salt://napv/cfg.j2\n    - require:\n      - netntp: ntp\n" +
			"ok:\n  test.succeed_without_changes: []\n",
		"napv/cfg.j2": "hostname r1\n",
	}
	calls := []salttest.Call{
		{Name: "state.sls", Fun: "state.sls", Args: []any{"napv.all"}},
		{Name: "state.sls test", Fun: "state.sls", Args: []any{"napv.all"}, Kwargs: []any{"test", true}},
		{Name: "state.single", Fun: "state.single", Args: []any{"netntp.managed", "x"}, Kwargs: []any{"servers", []any{"10.0.0.2"}}},
	}
	salttest.Run(t, salttest.Suite{Name: "virtual_napalm", Calls: calls, Srv: srv, Grains: payloadLinuxGrains(), Normalize: napalmFileNormalize}, suiteRegistry(t))
}

// napalmModuleFileRe matches the state module file salt.utils.napalm.virtual
// names, up to salt/states/.
var napalmModuleFileRe = regexp.MustCompile(`\(/\S*/salt/states/`)

// napalmFileNormalize is untimedRets with the folder of Salt's state
// module files in comments replaced by SALT/.
func napalmFileNormalize(name string, v any) any {
	v = untimedRets(name, v)
	if m, ok := v.(*payload.Map); ok {
		for _, it := range m.Items() {
			if r, ok := it.Value.(*payload.Map); ok {
				if c, ok := r.Get("comment"); ok {
					if s, ok := c.(string); ok {
						r.Set("comment", napalmModuleFileRe.ReplaceAllString(s, "(SALT/salt/states/"))
					}
				}
			}
		}
	}
	return v
}
