package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeCrontab stands in for crontab(1) in golden tests of Salt's cron
// module: the user given with -u is a file path holding that "user's"
// crontab, so every case has its own crontab inside its own directory.
// A line starting with "99 " is rejected like crontab rejects a bad
// minute.
const fakeCrontab = `#!/bin/sh
user=""
if [ "$1" = "-u" ]; then user=$2; shift 2; fi
if [ -z "$user" ]; then echo "crontab: test stand-in needs -u FILE" >&2; exit 2; fi
case "$1" in
-l) if [ -f "$user" ]; then cat "$user"; else echo "no crontab for $user" >&2; exit 1; fi ;;
-r) rm -f "$user" ;;
*) if grep -q '^99 ' "$1"; then printf '"-":1: bad minute\nerrors in crontab file, can'"'"'t install.\n' >&2; exit 1; fi
   cat "$1" > "$user" ;;
esac
`

// FakeCrontab puts the crontab stand-in first on PATH for the test (Salt
// run beside it inherits PATH too). Salt's cron module passes -u only when
// it runs as root, so the test is skipped otherwise.
func FakeCrontab(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cron golden tests need root: Salt's cron module passes crontab -u USER only as root")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crontab"), []byte(fakeCrontab), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// FakeCommands writes each script (name → shell script body, without the
// #! line) into a directory put first on PATH for the test, for golden
// tests that run Salt and gsalt against the same stand-ins of system tools.
func FakeCommands(t *testing.T, scripts map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
