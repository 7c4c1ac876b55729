package builtin_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// debFakeBins writes service, update-rc.d, insserv and runlevel scripts
// into a directory put first on PATH: each logs its command line and
// exits with the code in $DIR/rc-<name> (0 when absent); runlevel prints
// "unknown" like in a container.
func debFakeBins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"service", "update-rc.d", "insserv"} {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + dir + "/log\n" +
			"f=" + dir + "/rc-" + name + "-$1\n[ -f \"$f\" ] && exit $(cat \"$f\")\nexit 0\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "runlevel"), []byte("#!/bin/sh\necho unknown\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

type debProbe bool

func (p debProbe) Booted() bool { return bool(p) }

// TestDebianService checks debian_service's functions (the commands they
// run and what they return) and when the service functions use them: an
// os grain of Debian's list with systemd not PID 1.
func TestDebianService(t *testing.T) {
	dir := debFakeBins(t)
	if err := os.WriteFile(filepath.Join(dir, "rc-service-broken"), []byte("3"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	newEnv := func(osName string, booted bool) *modules.Env {
		return &modules.Env{ID: "m1", Registry: reg, Log: slog.New(slog.DiscardHandler),
			Grains:   payload.NewMap("os", osName, "os_family", "Debian", "kernel", "Linux"),
			Opts:     pkgTestOpts{"cachedir": t.TempDir()},
			Services: map[string]any{"systemd": debProbe(booted)}}
	}
	tests := []struct {
		name   string
		os     string
		booted bool
		active bool
		fun    string
		args   []any
		want   any
		log    string
	}{
		{"start", "Debian", false, true, "service.start", []any{"web"}, true, "service web start\n"},
		{"stop", "Raspbian", false, true, "service.stop", []any{"web"}, true, "service web stop\n"},
		{"restart", "Devuan", false, true, "service.restart", []any{"web"}, true, "service web restart\n"},
		{"reload", "NILinuxRT", false, true, "service.reload", []any{"web"}, true, "service web reload\n"},
		{"force_reload", "Debian", false, true, "service.force_reload", []any{"web"}, true, "service web force-reload\n"},
		{"start fails", "Debian", false, true, "service.start", []any{"broken"}, false, "service broken start\n"},
		{"status running", "Debian", false, true, "service.status", []any{"web"}, true, "service web status\n"},
		{"status dead", "Debian", false, true, "service.status", []any{"broken"}, false, "service broken status\n"},
		{"enable", "Debian", false, true, "service.enable", []any{"web"}, true, "insserv web\nupdate-rc.d web enable\n"},
		{"enable quotes the name for the shell", "Debian", false, true, "service.enable", []any{"a b"}, true, "insserv a b\nupdate-rc.d a b enable\n"},
		{"disable", "Debian", false, true, "service.disable", []any{"web"}, true, "update-rc.d web disable\n"},
		{"missing script", "Debian", false, true, "service.available", []any{"gsalt-no-such-service"}, false, ""},
		{"missing", "Debian", false, true, "service.missing", []any{"gsalt-no-such-service"}, true, ""},
		{"enabled missing", "Debian", false, true, "service.enabled", []any{"gsalt-no-such-service"}, false, ""},
		{"status glob matching nothing", "Debian", false, true, "service.status", []any{"gsalt-no-such-*"}, &payload.Map{}, ""},
		{"booted: systemd", "Debian", true, false, "service.offline", nil, false, ""},
		{"not Debian: systemd", "Arch", false, false, "service.offline", nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(filepath.Join(dir, "log"))
			env := newEnv(tc.os, tc.booted)
			if got := builtin.DebianServiceActive(env); got != tc.active {
				t.Fatalf("DebianServiceActive = %v, want %v", got, tc.active)
			}
			res := reg.Execute(context.Background(), modules.Binder{}, env, tc.fun, tc.args, nil)
			if res.Retcode != 0 {
				t.Fatalf("retcode %d: %v", res.Retcode, res.Return)
			}
			if tc.want != nil {
				if d := vectors.Equal(res.Return, tc.want); d != "" {
					t.Fatalf("return %#v: %s", res.Return, d)
				}
			}
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			if string(b) != tc.log {
				t.Errorf("commands run:\n%s\nwant:\n%s", b, tc.log)
			}
		})
	}
	// the enabled set comes from the runlevel's S links ("unknown": 2)
	if got := reg.Execute(context.Background(), modules.Binder{}, newEnv("Debian", false), "service.get_enabled", nil, nil); got.Retcode != 0 {
		t.Fatalf("get_enabled: %v", got.Return)
	} else if l, ok := got.Return.([]any); !ok {
		t.Fatalf("get_enabled = %#v", got.Return)
	} else {
		for _, n := range l {
			links, _ := filepath.Glob("/etc/rc[S2].d/S*" + strings.TrimSpace(payload.Text(n)))
			if len(links) == 0 {
				t.Errorf("get_enabled lists %v without a link in /etc/rc[S2].d", n)
			}
		}
	}
}
