package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// JobTable is the minion's table of running jobs, registered in
// modules.Env.Services under "jobs". Without it saltutil reads the proc
// files in cachedir/proc the way Salt does (gsalt-call).
type JobTable interface {
	// Running returns the proc data of every running job ({pid, fun, arg,
	// tgt, jid, ...}, what cachedir/proc/<jid> holds), sorted by jid.
	Running() []*payload.Map
	// Signal delivers sig to the job jid and returns the pid the job
	// reports, or ok=false when no such job runs. Every job of a gsalt
	// minion runs in the minion process, so a terminating signal cancels
	// the job's context instead of signalling the process.
	Signal(jid string, sig int) (pid int, ok bool)
}

// JobFinder is what a JobTable may provide besides: the proc data of the
// running job jid alone, so saltutil.find_job decodes one job's data and
// not every running job's (the CLI's find_job publishes target every
// minion yet to return, and those jobs' own data name them all).
type JobFinder interface {
	RunningJob(jid string) (*payload.Map, bool)
}

// jobsServiceName is the Env.Services key of the JobTable.
const jobsServiceName = "jobs"

// saltutilSyncKinds are the results of saltutil.sync_all, in Salt's order.
var saltutilSyncKinds = []string{"clouds", "beacons", "modules", "states", "sdb", "grains", "renderers", "returners",
	"output", "utils", "log_handlers", "executors", "proxymodules", "engines", "thorium", "serializers", "matchers"}

// saltutilFunctions is the job and refresh part of Salt's saltutil module.
// gsalt minions have no dynamic modules, so the sync functions find nothing
// to sync and return what Salt returns then (empty lists).
func saltutilFunctions() []modules.Function {
	jidSpec := modules.Spec{Params: []modules.Param{req("jid")}}
	syncSpec := modules.Spec{Params: []modules.Param{opt("saltenv", nil), opt("refresh", true), opt("extmod_whitelist", nil), opt("extmod_blacklist", nil)}}
	fns := []modules.Function{
		{Name: "saltutil.running", Doc: "Return the data on all running salt processes on the minion\n\nCLI Example:\n\n    salt '*' saltutil.running",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				ret := []any{}
				for _, d := range saltutilRunning(c) {
					ret = append(ret, d)
				}
				return ret, nil
			}},
		{Name: "saltutil.find_job", Spec: jidSpec,
			Doc: "Return the data for a specific job id that is currently running.\n\njid\n    The job id to search for and return data.\n\nCLI Example:\n\n    salt '*' saltutil.find_job <job id>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				jid := c.Args.Get("jid")
				if jt, ok := modules.Service[JobTable](c.Env, jobsServiceName); ok {
					if f, ok := jt.(JobFinder); ok {
						if d, ok := f.RunningJob(payload.Text(jid)); ok && payload.Text(jid) != "" {
							return d, nil
						}
						return &payload.Map{}, nil
					}
				}
				for _, d := range saltutilRunning(c) {
					if v, _ := d.Get("jid"); saltutilSameJID(v, jid) {
						return d, nil
					}
				}
				return &payload.Map{}, nil
			}},
		{Name: "saltutil.is_running", Spec: modules.Spec{Params: []modules.Param{req("fun")}},
			Doc: "If the named function is running return the data associated with it/them.\nThe argument can be a glob\n\nCLI Example:\n\n    salt '*' saltutil.is_running state.highstate",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				ret := []any{}
				for _, d := range saltutilRunning(c) {
					if py.Fnmatch(d.Str("fun"), c.Args.Str("fun")) {
						ret = append(ret, d)
					}
				}
				return ret, nil
			}},
		{Name: "saltutil.signal_job", Spec: modules.Spec{Params: []modules.Param{req("jid"), req("sig")}},
			Doc: "Sends a signal to the named salt job's process\n\nCLI Example:\n\n    salt '*' saltutil.signal_job <job id> 15",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				sig, err := c.Args.Int("sig")
				if err != nil {
					return nil, fmt.Errorf("%w: invalid signal %s", modules.ErrInvocation, c.Args.Str("sig"))
				}
				return saltutilSignal(c, c.Args.Get("jid"), int(sig)), nil
			}},
		{Name: "saltutil.term_job", Spec: jidSpec,
			Doc: "Sends a termination signal (SIGTERM 15) to the named salt job's process\n\nCLI Example:\n\n    salt '*' saltutil.term_job <job id>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return saltutilSignal(c, c.Args.Get("jid"), int(syscall.SIGTERM)), nil
			}},
		{Name: "saltutil.kill_job", Spec: jidSpec,
			Doc: "Sends a kill signal (SIGKILL 9) to the named salt job's process\n\nCLI Example:\n\n    salt '*' saltutil.kill_job <job id>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return saltutilSignal(c, c.Args.Get("jid"), int(syscall.SIGKILL)), nil
			}},
		{Name: "saltutil.term_all_jobs", Doc: "Sends a termination signal (SIGTERM 15) to all currently running jobs\n\nCLI Example:\n\n    salt '*' saltutil.term_all_jobs",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return saltutilSignalAll(c, int(syscall.SIGTERM)), nil
			}},
		{Name: "saltutil.kill_all_jobs", Doc: "Sends a kill signal (SIGKILL 9) to all currently running jobs\n\nCLI Example:\n\n    salt '*' saltutil.kill_all_jobs",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return saltutilSignalAll(c, int(syscall.SIGKILL)), nil
			}},
		{Name: "saltutil.refresh_pillar", Spec: modules.Spec{Params: []modules.Param{opt("wait", false), opt("timeout", int64(30)), opt("clean_cache", true)}},
			Doc: "Signal the minion to refresh the in-memory pillar data.\n\n:param wait: Wait for pillar refresh to complete, defaults to False.\n:param timeout: How long to wait in seconds, only used when wait is True, defaults to 30.\n:return: Boolean status, True when the pillar_refresh event was fired successfully.\n\nCLI Example:\n\n    salt '*' saltutil.refresh_pillar\n    salt '*' saltutil.refresh_pillar wait=True timeout=60",
			Fn:  saltutilRefreshPillar},
		{Name: "saltutil.pillar_refresh", Spec: modules.Spec{Params: []modules.Param{opt("wait", false), opt("timeout", int64(30)), opt("clean_cache", true)}},
			Doc: "Signal the minion to refresh the in-memory pillar data (alias of saltutil.refresh_pillar).", Fn: saltutilRefreshPillar},
		{Name: "saltutil.refresh_modules", Spec: modules.Spec{Kwargs: true},
			Doc: "Signal the minion to refresh the module and grain data\n\nCLI Example:\n\n    salt '*' saltutil.refresh_modules",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return eventFire(ctx, c, &payload.Map{}, "module_refresh"), nil
			}},
		{Name: "saltutil.refresh_grains", Spec: modules.Spec{Kwargs: true},
			Doc: "Refresh the minion's grains without syncing custom grains modules from ``salt://_grains``.\n\nrefresh_pillar : True\n    Set to ``False`` to keep pillar data from being refreshed.\n\nCLI Examples:\n\n    salt '*' saltutil.refresh_grains",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				kw := c.Args.CleanKwargs()
				refreshPillar := true
				if v, ok := kw.Delete("refresh_pillar"); ok {
					refreshPillar = payload.Truthy(v)
				}
				if kw.Len() > 0 {
					var bad []string
					for _, it := range kw.Items() {
						bad = append(bad, payload.KeyString(it.Key)+"="+pyfmt.Str(it.Value))
					}
					return nil, fmt.Errorf("%w: The following keyword arguments are not valid: %s", modules.ErrInvocation, strings.Join(bad, ", "))
				}
				if st, ok := modules.Service[GrainsStore](c.Env, grainsServiceName); ok {
					if err := st.RefreshGrains(ctx, refreshPillar); err != nil {
						c.Log().Warn("grains refresh failed", "err", err)
					}
				}
				return true, nil
			}},
		{Name: "saltutil.sync_all", Spec: syncSpec,
			Doc: "Sync down all of the dynamic modules from the file server for a specific\nenvironment. This function synchronizes custom modules, states, beacons,\ngrains, returners, output modules, renderers, and utils.\n\ngsalt copies the files to extension_modules as Salt does but does not\nload Python modules: a warning says so and each synced name is marked.\n\nrefresh : True\n    Also refresh the execution modules and recompile pillar data available\n    to the minion.\n\nCLI Examples:\n\n    salt '*' saltutil.sync_all\n    salt '*' saltutil.sync_all saltenv=dev",
			Fn:  saltutilSyncAll},
	}
	for _, kind := range append(append([]string{}, saltutilSyncKinds...), "pillar") {
		kind := kind
		spec := syncSpec
		if kind == "sdb" || kind == "clouds" {
			spec = modules.Spec{Params: []modules.Param{opt("saltenv", nil), opt("extmod_whitelist", nil), opt("extmod_blacklist", nil)}}
		}
		fns = append(fns, modules.Function{Name: "saltutil.sync_" + kind, Spec: spec,
			Doc: "Sync " + kind + " from ``salt://_" + saltutilForm(kind) + "`` to the minion's extension_modules.\n\ngsalt copies the files as Salt does but does not load Python modules:\na warning says so and each synced name is marked.\n\nCLI Example:\n\n    salt '*' saltutil.sync_" + kind,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if kind == "pillar" && optStr(c, "file_client") != "local" {
					return nil, fmt.Errorf("%w: Pillar modules can only be synced to masterless minions", modules.ErrExecution)
				}
				ret, err := saltutilSync(ctx, c, kind, c.Args.Get("saltenv"), c.Args.Get("extmod_whitelist"), c.Args.Get("extmod_blacklist"))
				if err != nil {
					return nil, err
				}
				if kind != "sdb" && kind != "clouds" && payload.Truthy(c.Args.Get("refresh")) {
					if kind == "pillar" || kind == "grains" {
						saltutilDoRefreshPillar(ctx, c, false, 30*time.Second)
					} else {
						eventFire(ctx, c, &payload.Map{}, "module_refresh")
					}
				}
				return ret, nil
			}})
		if kind == "output" {
			// Salt's alias of sync_output.
			alias := fns[len(fns)-1]
			alias.Name = "saltutil.sync_outputters"
			fns = append(fns, alias)
		}
	}
	return fns
}

// saltutilSameJID compares a proc file's jid with the requested one (Salt
// compares them as they are; gsalt also accepts an int-looking jid).
func saltutilSameJID(have, want any) bool {
	return payload.Text(have) == payload.Text(want) && payload.Text(want) != ""
}

// saltutilRunning is salt.utils.minion.running: the jobs table when the
// minion provides one, else the proc files of cachedir/proc whose process
// is alive (stale ones are removed).
func saltutilRunning(c *modules.Call) []*payload.Map {
	if jt, ok := modules.Service[JobTable](c.Env, jobsServiceName); ok {
		return jt.Running()
	}
	dir := filepath.Join(optStr(c, "cachedir"), "proc")
	if optStr(c, "cachedir") == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []*payload.Map
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if len(b) == 0 {
			_ = os.Remove(p)
			continue
		}
		m, err := payload.UnmarshalMap(b)
		if err != nil {
			continue
		}
		pid, _ := m.Int("pid")
		if int(pid) == os.Getpid() {
			// Salt (multiprocessing) skips the caller's own process.
			continue
		}
		if pid <= 0 || !saltutilPidAlive(int(pid)) {
			_ = os.Remove(p)
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Str("jid") < out[j].Str("jid") })
	return out
}

// saltutilPidAlive reports whether a process exists (os.kill(pid, 0)).
func saltutilPidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// saltutilSignal is signal_job: "Signal <sig> sent to job <jid> at pid
// <pid>", or "" when the job does not run.
func saltutilSignal(c *modules.Call, jidArg any, sig int) string {
	jid := payload.Text(jidArg)
	if jt, ok := modules.Service[JobTable](c.Env, jobsServiceName); ok {
		pid, found := jt.Signal(jid, sig)
		if !found {
			return ""
		}
		return fmt.Sprintf("Signal %d sent to job %s at pid %d", sig, jid, pid)
	}
	for _, d := range saltutilRunning(c) {
		if !saltutilSameJID(d.Str("jid"), jidArg) {
			continue
		}
		pid, _ := d.Int("pid")
		if int(pid) == os.Getpid() {
			return ""
		}
		if err := syscall.Kill(int(pid), syscall.Signal(sig)); err != nil {
			_ = os.Remove(filepath.Join(optStr(c, "cachedir"), "proc", jid))
			return fmt.Sprintf("Job %s was not running and job data has been cleaned up", jid)
		}
		return fmt.Sprintf("Signal %d sent to job %s at pid %d", sig, jid, pid)
	}
	return ""
}

func saltutilSignalAll(c *modules.Call, sig int) []any {
	ret := []any{}
	for _, d := range saltutilRunning(c) {
		ret = append(ret, saltutilSignal(c, d.Str("jid"), sig))
	}
	return ret
}

func saltutilRefreshPillar(ctx context.Context, c *modules.Call) (any, error) {
	timeout, err := c.Args.Float("timeout")
	if err != nil {
		timeout = 30
	}
	return saltutilDoRefreshPillar(ctx, c, payload.Truthy(c.Args.Get("wait")), time.Duration(timeout*float64(time.Second))), nil
}

// saltutilDoRefreshPillar asks the minion for a pillar refresh: through
// the PillarStore when there is one, else with a pillar_refresh event.
func saltutilDoRefreshPillar(ctx context.Context, c *modules.Call, wait bool, timeout time.Duration) bool {
	st, ok := modules.Service[PillarStore](c.Env, pillarServiceName)
	if !ok {
		return eventFire(ctx, c, payload.NewMap("clean_cache", true), "pillar_refresh")
	}
	if wait {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := st.RefreshPillar(wctx, true); err != nil {
			c.Log().Warn("Pillar refresh did not complete within timeout", "timeout", timeout, "err", err)
		}
		return true
	}
	if err := st.RefreshPillar(ctx, false); err != nil {
		c.Log().Warn("pillar refresh failed", "err", err)
		return false
	}
	return true
}
