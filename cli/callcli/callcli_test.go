package callcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/minion"
)

// callConfigDir writes a minion config whose master (port 1) never
// answers, with a local file_roots holding hello.txt.
func callConfigDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	conf := "id: m1\nroot_dir: " + dir + "\nmaster: 127.0.0.1\nmaster_port: 1\nenable_fqdns_grains: False\nauth_timeout: 2\nauth_tries: 1\nfile_roots:\n  base: [" + filepath.Join(dir, "srv") + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "srv", "hello.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunLocal(t *testing.T) {
	dir := callConfigDir(t)
	tests := []struct {
		name    string
		fun     string
		args    []string
		out     string
		pass    bool
		code    int
		stdout  string
		stderrs string
	}{
		{"ping nested", "test.ping", nil, "", false, 0, "local:\n    True\n", ""},
		{"ping json", "test.ping", nil, "json", false, 0, "{\n    \"local\": true\n}\n", ""},
		{"arg kwargs", "test.arg_clean", []string{"1", "two", "k=v", "n=3"}, "json", false, 0,
			"{\n    \"local\": {\n        \"args\": [\n            1,\n            \"two\"\n        ],\n        \"kwargs\": {\n            \"k\": \"v\",\n            \"n\": 3\n        }\n    }\n}\n", ""},
		{"retcode", "test.retcode", []string{"3"}, "", false, 1, "local:\n    True\n", ""},
		{"retcode passthrough", "test.retcode", []string{"3"}, "", true, 3, "local:\n    True\n", ""},
		{"missing function", "nosuch.fun", nil, "", false, 255, "", "'nosuch.fun' is not available.\n"},
		{"bad arguments", "test.echo", nil, "", false, 1, "", "Passed invalid arguments: echo() missing 1 required positional argument: 'text'."},
		{"invalid keyword argument", "test.echo", []string{"x", "bogus=1"}, "", false, 1, "", "The following keyword arguments are not valid: bogus=1\n"},
		{"invocation error raised by the function", "git.rebase", []string{dir, "opts=-i"}, "", false, 1, "", "\nPassed invalid arguments: Interactive rebases are not supported.\n\nUsage:\n"},
		{"local file client", "cp.list_master", nil, "json", false, 0, "{\n    \"local\": [\n        \"hello.txt\"\n    ]\n}\n", ""},
		{"execution error", "cp.get_url", []string{"rel/x"}, "", false, 1, "", "Error running 'cp.get_url': Path 'rel/x' is not absolute\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(context.Background(), Options{
				CallOptions: minion.CallOptions{ConfigDir: dir, Local: true, Fun: tc.fun, Args: tc.args},
				Out:         tc.out, RetcodePassthrough: tc.pass, Stdout: &out, Stderr: &errb,
			})
			if code != tc.code || out.String() != tc.stdout || !strings.Contains(errb.String(), tc.stderrs) {
				t.Fatalf("code %d stdout %q stderr %q; want %d %q %q", code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderrs)
			}
		})
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "var/cache/salt/minion/proc")); len(ents) != 0 {
		t.Errorf("proc files left: %v", ents)
	}
}

func TestRunMasterUnreachable(t *testing.T) {
	dir := callConfigDir(t)
	var out, errb bytes.Buffer
	code := Run(context.Background(), Options{CallOptions: minion.CallOptions{ConfigDir: dir, Fun: "test.ping"}, Stdout: &out, Stderr: &errb})
	if code != 2 || out.Len() != 0 || !strings.HasPrefix(errb.String(), "Error: ") {
		t.Fatalf("code %d stdout %q stderr %q; want 2 and an Error line", code, out.String(), errb.String())
	}
}

func TestRunBadConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte("id: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), Options{CallOptions: minion.CallOptions{ConfigDir: dir, Local: true, Fun: "test.ping"}, Stdout: &out, Stderr: &errb})
	if code != 1 || !strings.HasPrefix(errb.String(), "Error: ") {
		t.Fatalf("code %d stderr %q; want 1 and an Error line", code, errb.String())
	}
}
