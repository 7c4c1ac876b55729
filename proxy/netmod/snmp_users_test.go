package netmod_test

import (
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestSNMPUsersAndSanitizedConfig configures SNMP and a user on simulated
// IOS and EOS devices, then reads them back through snmp.config,
// users.config and napalm.call get_config sanitized=True.
func TestSNMPUsersAndSanitizedConfig(t *testing.T) {
	t.Parallel()
	type want struct {
		lines           string
		mode, chassis   string
		user            string
		level           int64
		password        string
		sanitizedMarker string
	}
	cases := map[string]want{
		"ios": {lines: "snmp-server community s3cr3t-comm RO\nsnmp-server location lab rack 4\nsnmp-server contact noc@example.net\nusername ops privilege 15 secret 5 $1$abcd$0123456789abcdefghijkl\n",
			mode: "ro", user: "ops", level: 15, password: "$1$abcd$0123456789abcdefghijkl", sanitizedMarker: "snmp-server community <removed>"},
		"eos": {lines: "snmp-server community s3cr3t-comm ro\nsnmp-server location lab rack 4\nsnmp-server contact noc@example.net\nsnmp-server chassis-id SIM-CHASSIS\nusername ops privilege 15 role network-admin secret sha512 $6$abcd$efgh\n",
			mode: "ro", chassis: "SIM-CHASSIS", user: "ops", level: 15, password: "$6$abcd$efgh", sanitizedMarker: "snmp-server community <removed>"},
	}
	for plat, w := range cases {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 1, nil)
			h := newHarness(t, initModule(t, proxyCfg(plat, f.Port(0))))
			if r := h.ret("net.load_config", kw("text", w.lines, "commit", true)); !r.Bool("result") {
				t.Fatalf("load_config: %v", r)
			}
			r := h.ret("snmp.config")
			out, _ := r.Get("out")
			snmp, _ := out.(*payload.Map)
			if !r.Bool("result") || snmp == nil || snmp.Str("location") != "lab rack 4" || snmp.Str("contact") != "noc@example.net" {
				t.Fatalf("snmp.config: %v", r)
			}
			comm := snmp.Map("community").Map("s3cr3t-comm")
			if comm == nil || comm.Str("mode") != w.mode {
				t.Errorf("community: %v", snmp)
			}
			if w.chassis != "" && snmp.Str("chassis_id") != w.chassis {
				t.Errorf("chassis_id: %v", snmp)
			}
			if plat == "ios" && (snmp.Str("chassis_id") == "" || strings.Contains(snmp.Str("chassis_id"), "Invalid")) {
				t.Errorf("ios chassis id from show snmp chassis: %v", snmp)
			}

			r = h.ret("users.config")
			out, _ = r.Get("out")
			users, _ := out.(*payload.Map)
			u := users.Map(w.user)
			if !r.Bool("result") || u == nil || u.Str("password") != w.password {
				t.Fatalf("users.config: %v", r)
			}
			if lvl, _ := u.Int("level"); lvl != w.level || u.List("sshkeys") == nil {
				t.Errorf("user %v", u)
			}

			r = h.ret("napalm.call", "get_config", kw("retrieve", "running", "sanitized", true))
			out, _ = r.Get("out")
			cfg, _ := out.(*payload.Map)
			if !r.Bool("result") || cfg == nil || strings.Contains(cfg.Str("running"), "s3cr3t-comm") {
				t.Fatalf("sanitized config still has the community: %v", r)
			}
			if plat == "ios" && !strings.Contains(cfg.Str("running"), w.sanitizedMarker) {
				t.Errorf("sanitized running config lacks %q:\n%s", w.sanitizedMarker, cfg.Str("running"))
			}
		})
	}
}
