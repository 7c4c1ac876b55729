package pillar_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestGitExtPillarGolden compiles the git ext_pillar cases of
// testdata/ext_git_cases.json (remote forms, per-remote and global
// parameters, __env__, all_saltenvs, fallback, pillarenv, mountpoints
// and git_pillar_includes, merging of several remotes, Salt's errors)
// against local bare repositories made by testdata/git/mkrepos.sh, and
// compares them with what Salt 3006's Pillar and its git_pillar
// (GitPython) made of the same repositories (ext_git_golden.json).
func TestGitExtPillarGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("TestGitExtPillarGolden: no git binary; skipping")
	}
	repos := t.TempDir()
	if out, err := exec.Command("/bin/sh", filepath.Join("testdata", "git", "mkrepos.sh"), repos).CombinedOutput(); err != nil {
		t.Fatalf("mkrepos.sh: %v\n%s", err, out)
	}
	extGolden(t, "ext_git_cases.json", "ext_git_golden.json", map[string]string{"GITDIR": repos})
}

// TestGitPillarUpdateInterval: a commit pushed to a remote reaches the
// pillar once git_pillar_update_interval has passed since the last fetch
// (Salt's master fetches on that interval in its maintenance process),
// and not before; the checkout sits under cachedir/git_pillar/<base64
// sha256 of the remote>/_ as Salt names it, with http.sslVerify set.
func TestGitPillarUpdateInterval(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("TestGitPillarUpdateInterval: no git binary; skipping")
	}
	dir := t.TempDir()
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "p.git")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=master"}, args...)...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	write("top.sls", "base:\n  '*':\n    - v\n")
	write("v.sls", "version: 1\n")
	git("add", "-A")
	git("commit", "-q", "-m", "1")
	git("clone", "-q", "--bare", work, bare)
	git("remote", "add", "origin", bare)
	remote := "master file://" + bare
	for _, interval := range []int64{3600, 0} {
		cfg := loadMaster(t, map[string]any{"pillar_roots": map[string]any{"base": []any{}}})
		cfg.Opts.Set("ext_pillar", []any{payload.NewMap("git", []any{remote})})
		cfg.Opts.Set("git_pillar_update_interval", interval)
		comp := pillar.New(pillar.ConfigFromOpts(cfg.Opts), pillar.Options{Logger: quiet})
		version := func() int64 {
			t.Helper()
			p, err := comp.Compile(context.Background(), pillar.Request{ID: "m1"})
			if err != nil {
				t.Fatal(err)
			}
			v, ok := p.Int("version")
			if !ok {
				t.Fatalf("no version in %v", p)
			}
			return v
		}
		v0 := version()
		cache, _ := cfg.Opts.Get("cachedir")
		sum := sha256.Sum256([]byte(remote))
		co := filepath.Join(pyfmt.Str(cache), "git_pillar", strings.ReplaceAll(base64.StdEncoding.EncodeToString(sum[:]), "/", "_"), "_", "v.sls")
		if _, err := os.Stat(co); err != nil {
			t.Errorf("checkout not where Salt puts it: %v", err)
		}
		// enforce_git_config: http.sslVerify as git_pillar_ssl_verify (true)
		if out, err := exec.Command("git", "-C", filepath.Dir(co), "config", "--get", "http.sslVerify").Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
			t.Errorf("http.sslVerify of the checkout: %q %v", out, err)
		}
		write("v.sls", fmt.Sprintf("version: %d\n", v0+1))
		git("commit", "-q", "-am", "next")
		git("push", "-q", "origin", "master")
		want := v0 + 1
		if interval > 0 {
			want = v0
		}
		if got := version(); got != want {
			t.Errorf("interval %d s: version %d after a push of %d, want %d", interval, got, v0+1, want)
		}
	}
}

// BenchmarkGitPillarCompile compiles a pillar from one git remote whose
// checkout is up to date (the steady state of a master: every minion's
// pillar refresh); each runs two git rev-parse commands.
func BenchmarkGitPillarCompile(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git binary")
	}
	repos := b.TempDir()
	if out, err := exec.Command("/bin/sh", filepath.Join("testdata", "git", "mkrepos.sh"), repos).CombinedOutput(); err != nil {
		b.Fatalf("mkrepos.sh: %v\n%s", err, out)
	}
	cfg := loadMaster(b, map[string]any{"pillar_roots": map[string]any{"base": []any{}}})
	cfg.Opts.Set("ext_pillar", []any{payload.NewMap("git", []any{"master file://" + repos + "/base.git"})})
	comp := pillar.New(pillar.ConfigFromOpts(cfg.Opts), pillar.Options{Logger: quiet})
	req := pillar.Request{ID: "web1", Grains: payload.NewMap("id", "web1", "role", "app")}
	if _, err := comp.Compile(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := comp.Compile(context.Background(), req)
		if err != nil || !p.Has("common") {
			b.Fatalf("%v %v", p, err)
		}
	}
}
