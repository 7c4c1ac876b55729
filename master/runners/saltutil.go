package runners

import (
	"context"

	"github.com/gsalt/gsalt/wire/payload"
)

// syncKinds are the keys of saltutil.sync_all's return, in Salt's order,
// with the runner that syncs each kind.
var syncKinds = []struct{ key, runner string }{
	{"clouds", "sync_clouds"}, {"modules", "sync_modules"}, {"states", "sync_states"},
	{"grains", "sync_grains"}, {"renderers", "sync_renderers"}, {"returners", "sync_returners"},
	{"output", "sync_output"}, {"proxymodules", "sync_proxymodules"}, {"runners", "sync_runners"},
	{"wheel", "sync_wheel"}, {"engines", "sync_engines"}, {"thorium", "sync_thorium"},
	{"queues", "sync_queues"}, {"pillar", "sync_pillar"}, {"utils", "sync_utils"},
	{"sdb", "sync_sdb"}, {"cache", "sync_cache"}, {"fileserver", "sync_fileserver"},
	{"tops", "sync_tops"}, {"tokens", "sync_eauth_tokens"}, {"serializers", "sync_serializers"},
	{"executors", "sync_executors"}, {"roster", "sync_roster"},
}

var syncParams = []Param{{Name: "saltenv", Default: "base"}, {Name: "extmod_whitelist"}, {Name: "extmod_blacklist"}}

// saltutilRunners is the sync part of Salt's saltutil runner
// (salt/runners/saltutil.py). gsalt loads no Python extension modules, so
// nothing is ever synced to the master: each sync returns the empty list
// Salt returns when there is nothing new, and sync_all the map of them.
func saltutilRunners() []Runner {
	out := []Runner{{Name: "saltutil.sync_all", Fn: syncAll, Params: syncParams,
		Doc: "Sync all custom types (gsalt loads no custom Python modules: nothing is synced).\n\nCLI Example:\n\n    salt-run saltutil.sync_all\n    salt-run saltutil.sync_all extmod_whitelist={'runners': ['custom_runner'], 'grains': []}"}}
	for _, k := range syncKinds {
		out = append(out, Runner{Name: "saltutil." + k.runner, Fn: syncNone, Params: syncParams,
			Doc: "Sync " + k.key + " from salt://_" + k.key + " to the master (gsalt loads no custom Python modules: nothing is synced).\n\nCLI Example:\n\n    salt-run saltutil." + k.runner})
	}
	return out
}

func syncNone(context.Context, *Call) (any, error) { return []any{}, nil }

func syncAll(context.Context, *Call) (any, error) {
	ret := payload.NewMap()
	for _, k := range syncKinds {
		ret.Set(k.key, []any{})
	}
	return ret, nil
}
