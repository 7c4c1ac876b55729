package netmod_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	sbuiltin "github.com/gsalt/gsalt/states/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// applyState runs one network state function through the proxy's
// execution functions (as a proxy minion's state run does).
func (h *harness) applyState(fun string, test bool, kv ...any) states.Ret {
	h.t.Helper()
	st := states.NewRegistry()
	if err := sbuiltin.Register(st); err != nil {
		h.t.Fatal(err)
	}
	f, ok := st.Lookup(fun)
	if !ok {
		h.t.Fatalf("no state %s", fun)
	}
	low := payload.NewMap(append([]any{"name", "net"}, kv...)...)
	args, err := modules.BindKeywords(f.Spec, low)
	if err != nil {
		h.t.Fatal(err)
	}
	c := &states.Call{ID: "net", Name: "net", Args: args, Low: low, Test: test, Env: h.env}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ret, err := f.Fn(ctx, c)
	if err != nil {
		h.t.Fatalf("%s: %v", fun, err)
	}
	return ret
}

// TestNetworkStates drives netntp.managed and netusers.managed on
// simulated devices: a test run predicts, a real run changes the device,
// a second run finds it configured.
func TestNetworkStates(t *testing.T) {
	t.Parallel()
	for _, plat := range []string{"ios", "eos"} {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 1, nil)
			h := newHarness(t, initModule(t, proxyCfg(plat, f.Port(0))))
			// On ios each load replaces the merge candidate (NAPALM ios), so
			// a run that both adds and removes commits only the removals, as
			// with Salt and NAPALM: this run only adds.
			want := []any{"10.0.0.7", "10.1.1.1"}
			if plat == "ios" {
				want = append(want, "172.16.255.254")
			}
			r := h.applyState("netntp.managed", true, "servers", want)
			if r.Result != states.None || r.Changes.Map("servers") == nil {
				t.Fatalf("netntp.managed test=True: %+v", r)
			}
			r = h.applyState("netntp.managed", false, "servers", want)
			if r.Result != states.True {
				t.Fatalf("netntp.managed: %+v %v", r, r.Changes)
			}
			cur := h.ret("ntp.servers")
			out, _ := cur.Get("out")
			var got []string
			for _, s := range out.([]any) {
				got = append(got, payload.Text(s))
			}
			slices.Sort(got)
			wantS := []string{}
			for _, w := range want {
				wantS = append(wantS, w.(string))
			}
			slices.Sort(wantS)
			if !slices.Equal(got, wantS) {
				t.Errorf("servers after netntp.managed: %v", got)
			}
			r = h.applyState("netntp.managed", false, "servers", want)
			if r.Result != states.True || r.Comment != "Device configured properly." {
				t.Errorf("second netntp.managed: %+v", r)
			}

			users := payload.NewMap("ops", payload.NewMap("level", int64(15), "password", "$1$abcd$0123456789abcdefghijkl", "sshkeys", []any{}))
			if plat == "eos" {
				users = payload.NewMap("ops", payload.NewMap("level", int64(15), "password", "$6$abcd$efgh", "sshkeys", []any{}))
			}
			cfg := h.ret("users.config")
			cur0, _ := cfg.Get("out")
			defaults := cur0.(*payload.Map) // keep the users the device has
			r = h.applyState("netusers.managed", false, "users", users, "defaults", defaults)
			if r.Result != states.True || r.Comment != "Configuration updated!" {
				t.Fatalf("netusers.managed: %+v %v", r, r.Changes)
			}
			r = h.applyState("netusers.managed", false, "users", users, "defaults", defaults)
			if r.Result != states.True || r.Comment != "Users already configured as needed." {
				b, _ := r.Changes.MarshalJSON()
				t.Errorf("second netusers.managed: %+v %s", r, b)
			}
		})
	}
}
