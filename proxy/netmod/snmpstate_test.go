package netmod_test

import (
	"testing"

	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestNetsnmpState drives netsnmp.managed on a simulated IOS device: the
// community it lacks is added and committed; a second run changes nothing
// (as with Salt, whose comparison never finds get_snmp_information's
// community acl "N/A" in the desired config, it succeeds without the
// "already configured" comment).
func TestNetsnmpState(t *testing.T) {
	t.Parallel()
	f := startFleet(t, "ios", 1, nil)
	h := newHarness(t, initModule(t, proxyCfg("ios", f.Port(0))))
	cur := h.ret("snmp.config")
	out, _ := cur.Get("out")
	dev := out.(*payload.Map)
	defaults := payload.NewMap()
	for _, k := range []string{"location", "contact", "chassis_id"} {
		if v, ok := dev.Get(k); ok {
			defaults.Set(k, v)
		}
	}
	cfg := payload.NewMap("community", "gsalt-ro")
	r := h.applyState("netsnmp.managed", false, "config", cfg, "defaults", defaults)
	b, _ := r.Changes.MarshalJSON()
	if r.Result != states.True || !payload.Truthy(r.Changes.Map("added")) {
		t.Fatalf("netsnmp.managed: %+v %s", r, b)
	}
	cur = h.ret("snmp.config")
	out, _ = cur.Get("out")
	if out.(*payload.Map).Map("community").Map("gsalt-ro") == nil {
		t.Fatalf("community not configured: %v", out)
	}
	r = h.applyState("netsnmp.managed", false, "config", cfg, "defaults", defaults)
	if r.Result != states.True || r.Changes.Len() != 0 || r.Comment != "" {
		b, _ = r.Changes.MarshalJSON()
		t.Errorf("second netsnmp.managed: %+v %s", r, b)
	}
}
