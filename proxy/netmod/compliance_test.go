package netmod_test

import (
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestComplianceReport validates a simulated IOS device against a Jinja +
// YAML validation file (from salt:// and inline): a complying getter, a
// failing value, a strict list with an extra element and a getter the
// driver lacks (skipped).
func TestComplianceReport(t *testing.T) {
	t.Parallel()
	f := startFleet(t, "ios", 1, nil)
	h := newHarness(t, initModule(t, proxyCfg("ios", f.Port(0))))
	src := `- get_facts:
    hostname: sw1
    vendor: Juniper
    model: {{ "CSR" ~ "1000V" }}
- get_arp_table:
    _mode: strict
    list:
      - ip: 192.0.2.123
- get_firewall_policies:
    policy1: {}
`
	check := func(r *payload.Map) {
		t.Helper()
		out, _ := r.Get("out")
		rep, _ := out.(*payload.Map)
		if !r.Bool("result") || rep == nil {
			t.Fatalf("compliance_report: %v", r)
		}
		facts := rep.Map("get_facts")
		if rep.Bool("complies") || facts.Bool("complies") {
			t.Errorf("report complies: %v", rep)
		}
		pr := facts.Map("present")
		if !pr.Map("hostname").Bool("complies") || !pr.Map("model").Bool("complies") || pr.Map("model").Bool("nested") {
			t.Errorf("facts present: %v", pr)
		}
		v := pr.Map("vendor")
		if v.Bool("complies") || v.Str("actual_value") != "Cisco" || v.Str("expected_value") != "Juniper" {
			t.Errorf("vendor: %v", v)
		}
		arp := rep.Map("get_arp_table")
		if arp.Bool("complies") || len(arp.List("missing")) != 1 || len(arp.List("extra")) == 0 {
			t.Errorf("arp: %v", arp)
		}
		sk := rep.List("skipped")
		if len(sk) != 1 || sk[0] != "get_firewall_policies" || !rep.Map("get_firewall_policies").Bool("skipped") || rep.Map("get_firewall_policies").Str("reason") != "NotImplemented" {
			t.Errorf("skipped: %v", rep)
		}
	}
	check(h.ret("napalm.compliance_report", kw("string", src)))
	h.file("validate.yml", src)
	check(h.ret("napalm.compliance_report", "salt://validate.yml"))
}
