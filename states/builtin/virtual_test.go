package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestVirtualStatesGolden compares, with Salt 3006
// (testdata/golden/virtual_states.json), what state.sls says for
// state modules whose __virtual__ refuses to load (the mysql states
// without a mysql module) and for a module that does not exist at all.
func TestVirtualStatesGolden(t *testing.T) {
	srv := map[string]string{
		"virt/user.sls":    "salt:\n  mysql_user.present: []\n",
		"virt/all.sls":     "db1:\n  mysql_database.present: []\ng:\n  mysql_grants.present:\n    - grant: all\n    - database: db1.*\n    - user: salt\nq:\n  mysql_query.run:\n    - database: db1\n    - query: SELECT 1\n",
		"virt/unknown.sls": "x:\n  gsalt_nosuch.present: []\ny:\n  file.gsalt_nosuch: []\n",
		"virt/mixed.sls":   "ok:\n  test.succeed_without_changes: []\nsalt:\n  mysql_user.absent: []\n",
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
	}
	// state.sls returns: every ret without its timings
	untimed := func(_ string, v any) any {
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
	salttest.Run(t, salttest.Suite{Name: "virtual_states", Calls: calls, Srv: srv, Grains: payloadLinuxGrains(), Normalize: untimed}, suiteRegistry(t))
}
