package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestSyncExtmodsPath checks where `gsalt-call --local saltutil.sync_*`
// writes: extension_modules as Salt 3006's apply_minion_config derives it.
// The default is the fixed /var/cache/salt/minion/extmods (not
// <cachedir>/extmods: Salt's default is a non-empty path, so only an empty
// extension_modules falls back to <cachedir>/extmods), root_dir is
// prepended, and --cachedir moves the file cache only. With
// GSALT_SALT_SRC set, real salt-call runs the same cases and must write
// the same files.
func TestSyncExtmodsPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gsalt-call")
	}
	bin := filepath.Join(proc.Build(t, "./cmd/gsalt-call"), "gsalt-call")
	src := saltpeer.Src()
	cases := []struct {
		name string
		conf string   // minion config lines; @ is the case's directory
		args []string // extra command-line options
		// extmods is config.get extension_modules (@ is the directory)
		extmods string
		// files are the synced module files under @ (sorted); nil skips
		// the sync (it would write to the real /var/cache).
		files []string
	}{
		{
			name:    "cachedir only keeps Salt's default",
			conf:    "cachedir: @/cache\npki_dir: @/pki\nlog_file: @/log\n",
			extmods: "/var/cache/salt/minion/extmods",
		},
		{
			name:    "root_dir prepended",
			conf:    "root_dir: @/root\n",
			extmods: "@/root/var/cache/salt/minion/extmods",
			files:   []string{"root/var/cache/salt/minion/extmods/modules/m11x.py", "root/var/cache/salt/minion/files/base/_modules/m11x.py"},
		},
		{
			name:    "empty extension_modules falls back to cachedir",
			conf:    "cachedir: @/cache\nextension_modules: ''\npki_dir: @/pki\nlog_file: @/log\n",
			extmods: "@/cache/extmods",
			files:   []string{"cache/extmods/modules/m11x.py", "cache/files/base/_modules/m11x.py"},
		},
		{
			name:    "explicit extension_modules",
			conf:    "cachedir: @/cache\nextension_modules: @/ext\npki_dir: @/pki\nlog_file: @/log\n",
			extmods: "@/ext",
			files:   []string{"cache/files/base/_modules/m11x.py", "ext/modules/m11x.py"},
		},
		{
			name:    "--cachedir moves the file cache, not extmods",
			conf:    "cachedir: @/cache\nextension_modules: ''\npki_dir: @/pki\nlog_file: @/log\n",
			args:    []string{"--cachedir", "@/cli"},
			extmods: "@/cache/extmods",
			files:   []string{"cache/extmods/modules/m11x.py", "cli/files/base/_modules/m11x.py"},
		},
	}
	type tool struct {
		name string
		cmd  func(ctx context.Context, args ...string) *exec.Cmd
	}
	tools := []tool{{"gsalt-call", func(ctx context.Context, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, bin, args...)
	}}}
	if src != "" {
		tools = append(tools, tool{"salt-call", func(ctx context.Context, args ...string) *exec.Cmd {
			return saltpeer.Command(ctx, src, "salt-call", args...)
		}})
	}
	for _, tc := range cases {
		for _, tl := range tools {
			t.Run(tc.name+"/"+tl.name, func(t *testing.T) {
				dir := t.TempDir()
				at := func(s string) string { return strings.ReplaceAll(s, "@", dir) }
				roots := filepath.Join(dir, "roots")
				writeFile(t, filepath.Join(roots, "_modules", "m11x.py"), "def hi():\n    return 1\n")
				writeFile(t, filepath.Join(dir, "conf", "minion"), at(tc.conf)+
					"id: extmods\nfile_client: local\nfile_roots:\n  base:\n    - "+roots+"\n")
				run := func(args ...string) any {
					t.Helper()
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					full := append([]string{"--local", "-c", filepath.Join(dir, "conf"), "--out", "json"}, args...)
					cmd := tl.cmd(ctx, full...)
					cmd.Env = append(cmd.Environ(), "HOME="+filepath.Join(dir, "home"), "SALT_SALTFILE=")
					out, err := cmd.Output()
					var ret struct {
						Local any `json:"local"`
					}
					if jerr := json.Unmarshal(out, &ret); jerr != nil {
						t.Fatalf("%s %v: %v; output %q: %v", tl.name, full, err, out, jerr)
					}
					return ret.Local
				}
				var cli []string
				for _, a := range tc.args {
					cli = append(cli, at(a))
				}
				if got, want := run(append(cli, "config.get", "extension_modules")...), at(tc.extmods); got != want {
					t.Errorf("config.get extension_modules = %v, want %q", got, want)
				}
				if tc.files == nil {
					return
				}
				got := run(append(cli, "saltutil.sync_modules")...)
				list, _ := got.([]any)
				if len(list) != 1 || !strings.HasPrefix(list[0].(string), "modules.m11x") {
					t.Fatalf("saltutil.sync_modules = %v", got)
				}
				var files []string
				_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Name() == "m11x.py" && !strings.HasPrefix(p, roots) {
						rel, _ := filepath.Rel(dir, p)
						files = append(files, rel)
					}
					return nil
				})
				slices.Sort(files)
				if !slices.Equal(files, tc.files) {
					t.Errorf("synced files = %q, want %q", files, tc.files)
				}
			})
		}
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
