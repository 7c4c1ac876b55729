package builtin

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// psUnits is the fake systemd unit database of the service scenarios.
const psUnits = "web.service active enabled\n" +
	"db.service inactive disabled\n" +
	"old.service inactive disabled changed\n" +
	"locked.service inactive masked\n" +
	"cron.timer active enabled"

func psSvc(name, fun string, test bool, kwargs ...any) psScenario {
	return psScenario{Name: name, Fun: fun, Test: test, Kwargs: kwargs, Units: psUnits}
}

func psSvcExec(name, fun string, args []any, kwargs ...any) psScenario {
	return psScenario{Name: name, Fun: fun, Exec: true, Args: args, Kwargs: kwargs, Units: psUnits}
}

func serviceScenarios() []psScenario {
	failStart := psSvc("running_start_fails", "service.running", false, "name", "db")
	failStart.Fail = map[string]string{"fail_start_db.service": "Job for db.service failed because the control process exited with error code."}
	failEnable := psSvc("running_enable_fails", "service.running", false, "name", "db", "enable", true)
	failEnable.Fail = map[string]string{"fail_enable_db.service": "Failed to enable unit: Access denied"}
	return []psScenario{
		psSvc("running_already", "service.running", false, "name", "web"),
		psSvc("running_start", "service.running", false, "name", "db"),
		psSvc("running_start_test", "service.running", true, "name", "db"),
		psSvc("running_start_enable", "service.running", false, "name", "db", "enable", true),
		psSvc("running_already_disable", "service.running", false, "name", "web", "enable", false),
		psSvc("running_already_enable_test", "service.running", true, "name", "web", "enable", true),
		psSvc("running_unit_changed", "service.running", false, "name", "old"),
		psSvc("running_missing", "service.running", false, "name", "nosuch"),
		psSvc("running_missing_test", "service.running", true, "name", "nosuch"),
		psSvc("running_masked", "service.running", false, "name", "locked"),
		psSvc("running_enabled_typo", "service.running", false, "name", "web", "enabled", true),
		psSvc("running_no_block", "service.running", false, "name", "db", "no_block", true),
		psSvc("running_timer", "service.running", false, "name", "cron.timer"),
		failStart,
		failEnable,
		psSvc("dead_stop", "service.dead", false, "name", "web"),
		psSvc("dead_stop_test", "service.dead", true, "name", "web"),
		psSvc("dead_already_disable", "service.dead", false, "name", "db", "enable", false),
		psSvc("dead_already_enable", "service.dead", false, "name", "db", "enable", true),
		psSvc("dead_stop_disable", "service.dead", false, "name", "web", "enable", false),
		psSvc("dead_missing", "service.dead", false, "name", "nosuch"),
		psSvc("enabled_change", "service.enabled", false, "name", "db"),
		psSvc("enabled_already", "service.enabled", false, "name", "web"),
		psSvc("enabled_test", "service.enabled", true, "name", "db"),
		psSvc("enabled_missing_test", "service.enabled", true, "name", "nosuch"),
		psSvc("disabled_change", "service.disabled", false, "name", "web"),
		psSvc("disabled_already", "service.disabled", false, "name", "db"),
		psSvc("disabled_missing", "service.disabled", false, "name", "nosuch"),
		psSvc("mod_watch_restart", "service.mod_watch", false, "name", "web", "sfun", "running"),
		psSvc("mod_watch_reload", "service.mod_watch", false, "name", "web", "sfun", "running", "reload", true),
		psSvc("mod_watch_start", "service.mod_watch", false, "name", "db", "sfun", "running"),
		psSvc("mod_watch_stop", "service.mod_watch", false, "name", "web", "sfun", "dead"),
		psSvc("mod_watch_already_stopped", "service.mod_watch", false, "name", "db", "sfun", "dead"),
		psSvc("mod_watch_test", "service.mod_watch", true, "name", "web", "sfun", "running"),
		psSvc("mod_watch_bad_sfun", "service.mod_watch", false, "name", "web", "sfun", "enabled"),
		psSvcExec("exec_status", "service.status", []any{"web"}),
		psSvcExec("exec_status_dead", "service.status", []any{"db"}),
		psSvcExec("exec_available", "service.available", []any{"web"}),
		psSvcExec("exec_missing", "service.missing", []any{"nosuch"}),
		psSvcExec("exec_start", "service.start", []any{"db"}),
		psSvcExec("exec_start_masked", "service.start", []any{"locked"}),
		psSvcExec("exec_stop", "service.stop", []any{"web"}, "no_block", true),
		psSvcExec("exec_restart", "service.restart", []any{"web"}),
		psSvcExec("exec_reload_dead", "service.reload", []any{"db"}),
		psSvcExec("exec_enable", "service.enable", []any{"db"}),
		psSvcExec("exec_disable", "service.disable", []any{"web"}),
		psSvcExec("exec_enabled", "service.enabled", []any{"cron.timer"}),
		psSvcExec("exec_disabled", "service.disabled", []any{"db"}),
		psSvcExec("exec_get_enabled", "service.get_enabled", nil, "root", "/nonexistent-gsalt-root"),
		psSvcExec("exec_get_disabled", "service.get_disabled", nil, "root", "/nonexistent-gsalt-root"),
		psSvcExec("exec_get_running", "service.get_running", nil),
		psSvcExec("exec_show", "service.show", []any{"web"}),
		psScope(psSvc("running_start_scope", "service.running", false, "name", "db", "enable", true)),
		psSvcExec("exec_force_reload", "service.force_reload", []any{"web"}),
		psSvcExec("exec_status_glob_missing", "service.status", []any{"gsalt-none-*"}),
		psSvcExec("exec_systemctl_reload", "service.systemctl_reload", nil),
	}
}

// TestPkgSvcGoldenService compares the service states and functions with
// Salt's.
func TestPkgSvcGoldenService(t *testing.T) { psRun(t, serviceScenarios()) }

// TestServiceOffline: without systemd as PID 1 (a container) but with
// systemctl installed, service.running and service.dead do nothing, like
// Salt 3006's systemd module in offline mode, and service.enabled reports
// the offline error; without systemctl every function reports that the
// module cannot load. The os grain is not Debian's: there Salt loads
// debian_service first (TestDebianServiceGolden).
func TestServiceOffline(t *testing.T) {
	dir := psFake(t, psScenario{Units: psUnits})
	t.Setenv("FAKESD_DIR", dir)
	t.Setenv("PATH", psFakePath()+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := psEnv(t, false, false)
	env.Grains.Set("os", "Arch")
	env.Grains.Set("os_family", "Arch")
	env.Services["systemd"] = psBooted(false)
	funcs := psStateFuncs()
	run := func(fun string, kw *payload.Map) states.Ret {
		t.Helper()
		fn := funcs[fun]
		args, err := modules.BindKeywords(fn.Spec, kw)
		if err != nil {
			t.Fatal(err)
		}
		state, f, _ := strings.Cut(fun, ".")
		ret, err := fn.Fn(context.Background(), &states.Call{Name: kw.Str("name"), State: state, Fun: f, Args: args, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		return ret
	}
	tests := []struct {
		fun     string
		result  states.Result
		comment string
	}{
		{"service.running", states.True, "Running in OFFLINE mode. Nothing to do"},
		{"service.dead", states.True, "Running in OFFLINE mode. Nothing to do"},
		{"service.enabled", states.False, "Cannot run in offline mode. Failed to get information on unit 'web'"},
	}
	for _, tc := range tests {
		ret := run(tc.fun, payload.NewMap("name", "web"))
		if ret.Result != tc.result || ret.Comment != tc.comment || ret.Changes.Len() != 0 {
			t.Errorf("%s: %v %q %v, want %v %q", tc.fun, ret.Result, ret.Comment, ret.Changes, tc.result, tc.comment)
		}
	}
	if b, _ := os.ReadFile(dir + "/log"); len(b) != 0 {
		t.Errorf("offline mode ran systemctl actions: %s", b)
	}
	res := env.Registry.Execute(context.Background(), modules.Binder{}, env, "service.offline", nil, nil)
	if s, ok := res.Return.(string); !ok || !strings.HasSuffix(s, "/systemctl") {
		t.Errorf("service.offline = %#v, want the systemctl path", res.Return)
	}
	t.Setenv("PATH", t.TempDir())
	res = env.Registry.Execute(context.Background(), modules.Binder{}, env, "service.status", []any{"web"}, nil)
	if res.Retcode == 0 || !strings.Contains(payload.Text(res.Return), "The systemd execution module failed to load") {
		t.Errorf("no systemctl: %#v", res)
	}
	ret := run("service.running", payload.NewMap("name", "web"))
	if ret.Result != states.False || !strings.Contains(ret.Comment, "The systemd execution module failed to load") {
		t.Errorf("running without systemctl: %v %q", ret.Result, ret.Comment)
	}
}

// TestDebianServiceLive compares, on this machine and with real Salt 3006
// (GSALT_SALT_SRC), the service functions and states where Salt loads
// debian_service before systemd_service: an os grain of Debian and systemd
// not PID 1 (a container). Read-only calls only: nothing is started or
// enabled. Where systemd is PID 1 both sides use systemd_service.
func TestDebianServiceLive(t *testing.T) {
	missing := "gsalt-no-such-service"
	var calls []salttest.Call
	exec := func(name, fun string, args ...any) {
		calls = append(calls, salttest.Call{Name: name, Fun: fun, Args: args})
	}
	exec("get_all", "service.get_all")
	exec("get_enabled", "service.get_enabled")
	exec("get_disabled", "service.get_disabled")
	exec("available missing", "service.available", missing)
	exec("missing missing", "service.missing", missing)
	exec("enabled missing", "service.enabled", missing)
	exec("disabled missing", "service.disabled", missing)
	exec("status missing", "service.status", missing)
	exec("status glob", "service.status", "gsalt-no-such-*")
	exec("offline", "service.offline")
	for _, svc := range []string{"cron", "ssh", "procps"} {
		exec("available "+svc, "service.available", svc)
		exec("enabled "+svc, "service.enabled", svc)
		exec("disabled "+svc, "service.disabled", svc)
	}
	calls = append(calls,
		single("state enabled missing test", "service.enabled", true, "name", missing),
		single("state enabled missing", "service.enabled", false, "name", missing),
		single("state disabled missing test", "service.disabled", true, "name", missing),
		single("state running missing test", "service.running", true, "name", missing),
		single("state dead missing test", "service.dead", true, "name", missing),
		single("state enabled cron test", "service.enabled", true, "name", "cron"),
		single("state disabled procps test", "service.disabled", true, "name", "procps"),
	)
	runStateSuite(t, salttest.Suite{Name: "debian_service_live", Live: true, Calls: calls, Grains: payloadLinuxGrains()})
}
