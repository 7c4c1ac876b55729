package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestFileKeyvalueStateGolden compares file.keyvalue (and test=True) with
// Salt 3006 (testdata/golden/file_keyvalue.json).
func TestFileKeyvalueStateGolden(t *testing.T) {
	conf := "# sshd\nPermitRootLogin yes\n#PasswordAuthentication yes\n  Port = 22\nX11Forwarding no\nX11Forwarding yes\nUsePAM yes"
	kv := payload.NewMap("PermitRootLogin", "no", "UsePAM", "yes")
	n := "{dir}/c"
	calls := []salttest.Call{
		single("key value", "file.keyvalue", false, "name", n, "key", "PermitRootLogin", "value", "no", "separator", " "),
		single("key value test", "file.keyvalue", true, "name", n, "key", "PermitRootLogin", "value", "no", "separator", " "),
		single("key value same", "file.keyvalue", false, "name", n, "key", "UsePAM", "value", "yes", "separator", " "),
		single("key_values", "file.keyvalue", false, "name", n, "key_values", kv, "separator", " "),
		single("uncomment", "file.keyvalue", false, "name", n, "key", "PasswordAuthentication", "value", "no", "separator", " ", "uncomment", "#"),
		single("uncomment test", "file.keyvalue", true, "name", n, "key", "PasswordAuthentication", "value", "no", "separator", " ", "uncomment", "#"),
		single("count dup", "file.keyvalue", false, "name", n, "key", "X11Forwarding", "value", "no", "separator", " "),
		single("count 2", "file.keyvalue", false, "name", n, "key", "X11Forwarding", "value", "no", "separator", " ", "count", 2),
		single("count -1", "file.keyvalue", false, "name", n, "key", "X11Forwarding", "value", "no", "separator", " ", "count", -1),
		single("append", "file.keyvalue", false, "name", n, "key_values", payload.NewMap("Banner", "/etc/issue", "MaxAuthTries", 3), "separator", " ", "append_if_not_found", true),
		single("append test", "file.keyvalue", true, "name", n, "key", "Banner", "value", "/etc/issue", "separator", " ", "append_if_not_found", true),
		single("prepend", "file.keyvalue", false, "name", n, "key_values", payload.NewMap("A", 1, "B", true), "separator", " ", "prepend_if_not_found", true),
		single("not found", "file.keyvalue", false, "name", n, "key", "Nope", "value", "x", "separator", " "),
		single("leading space key", "file.keyvalue", false, "name", n, "key", "Port ", "value", " 2222", "separator", "="),
		single("ignore case", "file.keyvalue", false, "name", n, "key", "permitrootlogin", "value", "YES", "separator", " ", "key_ignore_case", true, "value_ignore_case", true),
		single("no show", "file.keyvalue", false, "name", n, "key", "PermitRootLogin", "value", "no", "separator", " ", "show_changes", false),
		single("no show test", "file.keyvalue", true, "name", n, "key", "PermitRootLogin", "value", "no", "separator", " ", "show_changes", false),
		single("missing file", "file.keyvalue", false, "name", "{dir}/nope", "key", "a", "value", "b"),
		single("missing file ignored", "file.keyvalue", false, "name", "{dir}/nope", "key", "a", "value", "b", "ignore_if_missing", true),
		single("no key", "file.keyvalue", false, "name", n),
		single("not a dict", "file.keyvalue", false, "name", n, "key_values", []any{"a"}),
		single("both", "file.keyvalue", false, "name", n, "key", "a", "value", "b", "key_values", payload.NewMap("c", "d")),
	}
	for i := range calls {
		calls[i].Files = map[string]string{"c": conf}
	}
	runStateSuite(t, salttest.Suite{Name: "file_keyvalue", Calls: calls, Grains: payloadLinuxGrains()})
}
