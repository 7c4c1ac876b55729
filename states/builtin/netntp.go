package builtin

import (
	"context"
	"slices"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// netntpStates is Salt's netntp state module (salt/states/netntp.py):
// netntp.managed makes the device's NTP peers and servers the given lists
// through ntp.peers/ntp.servers, ntp.set_*/ntp.delete_* (commit=False) and
// net.config_control, with Salt's result and comment rules (among them:
// the result stays False when the lists changed but nothing was loaded).
// Names are not resolved through DNS (Salt does so only with dnspython).
func netntpStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("peers", nil), sbOpt("servers", nil)}}
	return []states.Function{{Name: "netntp.managed", Spec: spec, Fn: netntpManaged}}
}

// netExecDict calls an execution function that returns Salt's napalm
// {out, result, comment} dict; a failed call becomes result False with the
// failure as comment.
func netExecDict(ctx context.Context, c *states.Call, fun string, args []any, kw *payload.Map) *payload.Map {
	out, err := c.Exec(ctx, fun, args, kw)
	if m, ok := out.(*payload.Map); ok {
		return m
	}
	msg := "no result"
	if err != nil {
		msg = netconfigErrText(err)
	}
	return payload.NewMap("out", nil, "result", false, "comment", msg)
}

// netConfigControl calls net.config_control: (result, comment).
func netConfigControl(ctx context.Context, c *states.Call) (bool, string) {
	out, err := c.Exec(ctx, "net.config_control", nil, nil)
	if l, ok := out.([]any); ok && len(l) == 2 {
		return payload.Truthy(l[0]), payload.Text(l[1])
	}
	if err != nil {
		return false, netconfigErrText(err)
	}
	return false, ""
}

// strList reports whether v is a list of strings (Salt's _check).
func netStrList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

type netntpPart struct {
	result, expectedChange, successfullyChanged bool
	comment                                     string
	changes                                     *payload.Map
}

// netntpDiffAndConfigure is Salt's _check_diff_and_configure for peers or
// servers.
func netntpDiffAndConfigure(ctx context.Context, c *states.Call, want []string, what string) netntpPart {
	res := netntpPart{successfullyChanged: true, changes: &payload.Map{}}
	cur := netExecDict(ctx, c, "ntp."+what, nil, nil)
	if !cur.Bool("result") {
		res.comment = "Cannot retrieve NTP " + what + " from the device: " + payload.Text(netGet(cur, "comment"))
		return res
	}
	configured := map[string]bool{}
	switch o := netGet(cur, "out").(type) {
	case *payload.Map:
		for _, k := range o.Keys() {
			configured[k] = true
		}
	case []any:
		for _, e := range o {
			configured[payload.Text(e)] = true
		}
	}
	desired := map[string]bool{}
	for _, s := range want {
		desired[s] = true
	}
	var add, del []string
	same := true
	for s := range desired {
		if !configured[s] {
			same = false
			if s != "" {
				add = append(add, s)
			}
		}
	}
	for s := range configured {
		if !desired[s] {
			same = false
			if s != "" {
				del = append(del, s)
			}
		}
	}
	// Salt's lists come from set differences (Python's set order); gsalt
	// sorts them.
	slices.Sort(add)
	slices.Sort(del)
	if same {
		res.result, res.comment = true, "NTP "+what+" already configured as needed."
		return res
	}
	if len(add) > 0 {
		res.changes.Set("added", netAnyList(add))
	}
	if len(del) > 0 {
		res.changes.Set("removed", netAnyList(del))
	}
	if c.Test {
		res.comment = "Testing mode: configuration was not changed!"
		return res
	}
	kind := map[string]string{"peers": "peers", "servers": "servers"}[what]
	if len(add) > 0 {
		r := netExecDict(ctx, c, "ntp.set_"+kind, netAnyList(add), payload.NewMap("commit", false))
		if r.Bool("result") {
			res.expectedChange = true
		} else {
			res.successfullyChanged = false
			res.comment += "Cannot set NTP " + what + ": " + payload.Text(netGet(r, "comment"))
		}
	}
	if len(del) > 0 {
		r := netExecDict(ctx, c, "ntp.delete_"+kind, netAnyList(del), payload.NewMap("commit", false))
		if r.Bool("result") {
			res.expectedChange = true
		} else {
			res.successfullyChanged = false
			res.comment += "Cannot remove NTP " + what + ": " + payload.Text(netGet(r, "comment"))
		}
	}
	return res
}

func netGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

func netAnyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func netntpManaged(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := states.Ret{Name: sbName(c), Result: states.False, Changes: &payload.Map{}}
	peersArg, serversArg := c.Args.Get("peers"), c.Args.Get("servers")
	_, peersIsList := peersArg.([]any)
	_, serversIsList := serversArg.([]any)
	if !peersIsList && !serversIsList {
		return ret, nil
	}
	peers, okP := netStrList(peersArg)
	if peersIsList && !okP {
		ret.Comment = "NTP peers must be a list of valid IP Addresses or Domain Names"
		return ret, nil
	}
	servers, okS := netStrList(serversArg)
	if serversIsList && !okS {
		ret.Comment = "NTP servers must be a list of valid IP Addresses or Domain Names"
		return ret, nil
	}
	// Salt starts from result False and ANDs the parts into it, so only
	// net.config_control can make it True below.
	result, comment := false, ""
	successfully, expected := true, false
	changes := &payload.Map{}
	if peersIsList {
		p := netntpDiffAndConfigure(ctx, c, peers, "peers")
		expected, successfully = p.expectedChange, p.successfullyChanged
		comment += "\n" + p.comment
		if p.changes.Len() > 0 {
			changes.Set("peers", p.changes)
		}
	}
	if serversIsList {
		s := netntpDiffAndConfigure(ctx, c, servers, "servers")
		expected = expected || s.expectedChange
		successfully = successfully && s.successfullyChanged
		comment += "\n" + s.comment
		if s.changes.Len() > 0 {
			changes.Set("servers", s.changes)
		}
	}
	ret.Changes = changes
	if changes.Len() == 0 && !expected {
		ret.Result, ret.Comment = states.True, "Device configured properly."
		return ret, nil
	}
	if c.Test {
		ret.Result, ret.Comment = states.None, "This is in testing mode, the device configuration was not changed!"
		return ret, nil
	}
	if expected {
		cr, cc := netConfigControl(ctx, c)
		result = cr && successfully
		comment += cc
	}
	ret.Result = states.ResultOf(result)
	ret.Comment = comment
	return ret, nil
}
