package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestServiceFunctions runs the systemd service module against the fake
// systemctl (../../states/testdata/service/fakebin).
func TestServiceFunctions(t *testing.T) {
	units := "web.service active enabled\ndb.service inactive disabled\nold.service inactive disabled changed\nlocked.service inactive masked\n"
	root := t.TempDir()
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{
		{"lib/systemd/system/web.service", 0o644},
		{"lib/systemd/system/sockd.socket", 0o644},
		{"lib/systemd/system/README", 0o644},
		{"etc/systemd/system/local.service", 0o644},
		{"etc/init.d/legacy", 0o755},
		{"etc/init.d/web", 0o755},
		{"etc/init.d/notexec", 0o644},
	} {
		p := filepath.Join(root, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		fun     string
		args    []any
		want    any
		errPart string
		log     string
	}{
		{"status running", "service.status", []any{"web"}, true, "", ""},
		{"status dead", "service.status", []any{"db.service"}, false, "", ""},
		{"status of a changed unit reloads systemd first", "service.status", []any{"old"}, false, "", "systemctl --system daemon-reload\n"},
		{"available", "service.available", []any{"web"}, true, "", ""},
		{"missing", "service.missing", []any{"nosuch"}, true, "", ""},
		{"start", "service.start", []any{"db", pkgKw("no_block", true)}, true, "", "systemctl --no-block start db.service\n"},
		{"start masked", "service.start", []any{"locked"}, nil, "ERROR: Failed to start locked.service: Unit locked.service is masked.", "systemctl start locked.service\n"},
		{"stop unknown", "service.stop", []any{"nosuch"}, false, "", "systemctl stop nosuch.service\n"},
		{"enable", "service.enable", []any{"db"}, true, "", "systemctl enable db.service\n"},
		{"enabled", "service.enabled", []any{"web"}, true, "", ""},
		{"disabled", "service.disabled", []any{"db"}, true, "", ""},
		{"get_all below a root", "service.get_all", []any{pkgKw("root", root)}, []any{"legacy", "local", "sockd.socket", "web"}, "", ""},
		{"get_enabled", "service.get_enabled", []any{pkgKw("root", root)}, []any{"web"}, "", ""},
		{"show", "service.show", []any{"web"}, nil, "", ""},
		{"unknown argument", "service.status", []any{"web", pkgKw("bogus", 1)}, nil, "ERROR executing 'service.status': The following keyword arguments are not valid: bogus=1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, env := pkgFakeEnv(t, map[string]string{"units": units})
			res := env.Registry.Execute(context.Background(), modules.Binder{}, env, tc.fun, tc.args, nil)
			if tc.errPart != "" {
				if res.Retcode == 0 || payload.Text(res.Return) != tc.errPart {
					t.Fatalf("got %d %q, want %q", res.Retcode, payload.Text(res.Return), tc.errPart)
				}
			} else if res.Retcode != 0 {
				t.Fatalf("retcode %d: %v", res.Retcode, res.Return)
			} else if tc.want != nil {
				if d := vectors.Equal(res.Return, tc.want); d != "" {
					t.Fatalf("return %v: %s", res.Return, d)
				}
			}
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			if string(b) != tc.log {
				t.Errorf("systemctl actions %q, want %q", b, tc.log)
			}
		})
	}
	t.Run("show parses maps and lists", func(t *testing.T) {
		_, env := pkgFakeEnv(t, map[string]string{"units": units})
		res := env.Registry.Execute(context.Background(), modules.Binder{}, env, "service.show", []any{"web"}, nil)
		m, ok := res.Return.(*payload.Map)
		if !ok {
			t.Fatalf("show: %v", res.Return)
		}
		exec, _ := m.Get("ExecStart")
		after, _ := m.Get("After")
		if em, ok := exec.(*payload.Map); !ok || em.Str("path") != "/usr/sbin/web" || em.Str("argv[]") != "/usr/sbin/web -f" {
			t.Errorf("ExecStart = %v", exec)
		}
		if d := vectors.Equal(after, []any{"network.target", "basic.target"}); d != "" {
			t.Errorf("After: %s", d)
		}
	})
}

// TestServiceNotBooted: off systemd the module works in Salt's offline mode
// (systemctl present) or not at all (no systemctl, or not Linux). The os
// grain is not of Debian's family list: there Salt loads debian_service
// first (TestDebianService).
func TestServiceNotBooted(t *testing.T) {
	_, env := pkgFakeEnv(t, map[string]string{"units": "web.service active enabled\n"})
	env.Services["systemd"] = pkgTestProbe(false)
	env.Grains.Set("os", "Arch")
	ctx := context.Background()
	res := env.Registry.Execute(ctx, modules.Binder{}, env, "service.available", []any{"web"}, nil)
	if res.Return != "ERROR: Cannot run in offline mode. Failed to get information on unit 'web'" {
		t.Errorf("offline available: %v", res.Return)
	}
	res = env.Registry.Execute(ctx, modules.Binder{}, env, "service.offline", nil, nil)
	if s, _ := res.Return.(string); !strings.HasSuffix(s, "/systemctl") {
		t.Errorf("offline: %v", res.Return)
	}
	env.Grains = payload.NewMap("kernel", "Darwin")
	res = env.Registry.Execute(ctx, modules.Binder{}, env, "service.status", []any{"web"}, nil)
	want := "ERROR: The systemd execution module failed to load: only available on Linux systems which have been booted with systemd."
	if res.Retcode == 0 || res.Return != want {
		t.Errorf("not Linux: %v", res.Return)
	}
}
