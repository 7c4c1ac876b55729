package netmod_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

const versionTemplate = `Value Hostname (\S+)
Value Uptime (.+)
Value List Versions ([^\s,]+)

Start
  ^${Hostname} uptime is ${Uptime}
  ^Cisco IOS.* Version ${Versions},?
`

// TestCliTextFSM parses "show version" of a simulated IOS device through a
// user template: textfsm_template (salt://), textfsm_template_dict and a
// textfsm_path index matched by command abbreviation and the os grain; a
// broken template keeps the raw output with Salt's comment.
func TestCliTextFSM(t *testing.T) {
	t.Parallel()
	f := startFleet(t, "ios", 1, nil)
	h := newHarness(t, initModule(t, proxyCfg("ios", f.Port(0))))
	h.env.Grains.Set("os", "ios")
	h.file("version.textfsm", versionTemplate)
	h.file("bad.textfsm", "Value Broken (\n\nStart\n  ^${Nope}\n")
	if err := mkdir(h, "tpl"); err != nil {
		t.Fatal(err)
	}
	h.file("tpl/version.textfsm", versionTemplate)
	h.file("tpl/index", "Template, Hostname, Platform, Command\n\nversion.textfsm, .*, ios, sh[[ow]] ver[[sion]]\n")

	check := func(name string, r *payload.Map) {
		t.Helper()
		rows := r.Map("out").List("show version")
		if !r.Bool("result") || len(rows) != 1 {
			t.Fatalf("%s: %v", name, r)
		}
		row := rows[0].(*payload.Map)
		if row.Str("hostname") != "sw1" || row.Str("uptime") == "" || len(row.List("versions")) != 2 ||
			payload.Text(row.List("versions")[1]) != "17.3.4a" {
			t.Errorf("%s: row %v", name, row)
		}
		if keys := row.Keys(); len(keys) != 3 || keys[0] != "hostname" || keys[2] != "versions" {
			t.Errorf("%s: keys %v", name, keys)
		}
	}
	check("template", h.ret("net.cli", "show version", kw("textfsm_parse", true, "textfsm_template", "salt://version.textfsm")))
	check("template dict", h.ret("net.cli", "show version", kw("textfsm_parse", true,
		"textfsm_template_dict", payload.NewMap("show version", "salt://version.textfsm"))))
	check("path index", h.ret("net.cli", "show version", kw("textfsm_parse", true, "textfsm_path", "salt://tpl/")))

	r := h.ret("net.cli", "show version", kw("textfsm_parse", true, "textfsm_template", "salt://bad.textfsm"))
	if !r.Bool("result") || r.Map("out").Str("show version") == "" ||
		!hasPrefix(r.Str("comment"), "Unable to process the output from show version: Unable to parse the TextFSM template from salt://bad.textfsm: ") {
		t.Errorf("bad template: %v", r)
	}
}

func mkdir(h *harness, name string) error {
	return os.MkdirAll(filepath.Join(h.env.Services["files"].(fakeFiles).dir, name), 0o700)
}

func hasPrefix(s, p string) bool { return strings.HasPrefix(s, p) }
