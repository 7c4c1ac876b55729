package grains

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltOnlyGrains are grains real Salt reports and gsalt does not (see the
// package documentation).
var saltOnlyGrains = map[string]bool{
	"pythonexecutable": true, "pythonpath": true, "pythonversion": true,
	"saltpath": true, "zmqversion": true,
	"__suse_reserved_pkg_all_versions_support": true,
	"__suse_reserved_pkg_patches_support":      true,
	"__suse_reserved_saltutil_states_support":  true,
}

// TestAgainstSalt runs real Salt's grains.items on this machine and
// compares every grain gsalt computes.
func TestAgainstSalt(t *testing.T) {
	src := os.Getenv("GSALT_SALT_SRC")
	if src == "" {
		t.Skip("GSALT_SALT_SRC not set: skipping the comparison with real Salt")
	}
	if testing.Short() {
		t.Skip("short mode: skipping the comparison with real Salt")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	minionConf := strings.Join([]string{
		"id: gsalt-grains-test",
		"root_dir: " + filepath.Join(dir, "root"),
		"pki_dir: " + filepath.Join(dir, "root", "pki"),
		"cachedir: " + filepath.Join(dir, "root", "cache"),
		"log_file: " + filepath.Join(dir, "root", "minion.log"),
		"enable_fqdns_grains: False",
		"file_client: local",
		"grains:",
		"  roles: [from-config]",
		"  custom: {a: 1}",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(minionConf), 0o600); err != nil {
		t.Fatal(err)
	}
	grainsFile := "roles: [from-file]\nfilegrain: 0755\nos: FileOS\n"
	if err := os.WriteFile(filepath.Join(conf, FileName), []byte(grainsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", filepath.Join(src, "scripts", "salt-call"),
		"--local", "-c", conf, "grains.items", "--out=json")
	cmd.Dir = wd
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src+":"+saltpeer.Pyshim())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("salt-call: %v\n%s", err, stderr.String())
	}
	var out struct {
		Local map[string]any `json:"local"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || out.Local == nil {
		t.Fatalf("salt-call output: %v\n%s", err, stdout.String())
	}
	salt := out.Local

	pyver, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c",
		"import sys; print(int(sys.version_info >= (3, 11)))").Output()
	if err != nil {
		t.Fatal(err)
	}
	static, err := config.DecodeYAMLPayload([]byte(minionConf))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Load(ctx, Options{
		ID: "gsalt-grains-test", Master: "salt", ConfDir: conf,
		Grains: static.(*payload.Map).Map("grains"),
		Opts:   mapGetter{"enable_fqdns_grains": false},
	})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	var mine map[string]any
	if err := json.Unmarshal(js, &mine); err != nil {
		t.Fatal(err)
	}

	// Documented differences.
	cRounds := 2
	if strings.TrimSpace(string(pyver)) == "1" {
		cRounds = 1 // Python 3.11+ hashes with SipHash-1-3
	}
	mine["server_id"] = float64(serverIDHash("gsalt-grains-test", cRounds))
	mine["pid"] = salt["pid"]
	if li, ok := salt["locale_info"].(map[string]any); ok && li["timezone"] == "unknown" {
		mine["locale_info"].(map[string]any)["timezone"] = "unknown" // Salt without dateutil
	}
	for _, k := range []string{"fqdn_ip4", "fqdn_ip6"} { // Salt returns list(set)
		for _, m := range []map[string]any{salt, mine} {
			if l, ok := m[k].([]any); ok {
				sort.Slice(l, func(i, j int) bool { return l[i].(string) < l[j].(string) })
			}
		}
	}

	for k, v := range salt {
		if saltOnlyGrains[k] {
			continue
		}
		got, ok := mine[k]
		if !ok {
			t.Errorf("grain %q missing (Salt: %v)", k, v)
			continue
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("grain %q:\n gsalt %v\n salt  %v", k, got, v)
		}
	}
	for k := range mine {
		if _, ok := salt[k]; !ok {
			t.Errorf("grain %q not reported by Salt (gsalt: %v)", k, mine[k])
		}
	}
	for _, k := range []string{"roles", "custom", "filegrain", "os"} {
		if _, ok := salt[k]; !ok {
			t.Errorf("static grain %q missing from Salt's output: test setup is wrong", k)
		}
	}
}
