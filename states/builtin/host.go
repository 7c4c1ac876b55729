package builtin

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's host state module (salt/states/host.py): entries of
// the hosts file through the hosts execution module.

func hostStates() []states.Function {
	return []states.Function{
		{Name: "host.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("ip"), sbOpt("comment", ""), sbOpt("clean", false)}}, Fn: hostPresent},
		{Name: "host.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("ip")}}, Fn: hostAbsent},
		{Name: "host.only", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("hostnames")}}, Fn: hostOnly},
	}
}

// anyList is a value as a list ([v] for a scalar).
func anyList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func containsPy(l []any, v any) bool {
	for _, x := range l {
		if pyfmt.Equal(x, v) {
			return true
		}
	}
	return false
}

// hostPair is an (address, value) tuple kept in insertion order.
type hostPair struct{ addr, val any }

type hostPairs []hostPair

func (p *hostPairs) add(addr, val any) {
	for _, x := range *p {
		if pyfmt.Equal(x.addr, addr) && pyfmt.Equal(x.val, val) {
			return
		}
	}
	*p = append(*p, hostPair{addr, val})
}

// setdefaultList appends v to m[k1][k2], creating both.
func setdefaultList(m *payload.Map, k1 string, k2, v any) {
	inner, _ := m.Get(k1)
	im, ok := inner.(*payload.Map)
	if !ok {
		im = &payload.Map{}
		m.Set(k1, im)
	}
	cur, _ := im.GetKey(k2)
	l, _ := cur.([]any)
	im.SetKey(k2, append(l, v))
}

func hostPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	ips := anyList(c.Args.Get("ip"))
	comment := c.Args.Get("comment")
	hasComment := payload.Truthy(comment)
	hv, err := sbExec(ctx, c, "hosts.list_hosts", nil, nil)
	if err != nil {
		return ret, err
	}
	all, _ := hv.(*payload.Map)
	if all == nil {
		all = &payload.Map{}
	}
	var comments []string
	var toAdd, toRemove, updateComment hostPairs
	for _, addr := range ips {
		if _, ok := all.GetKey(addr); !ok {
			toAdd.add(addr, name)
			if hasComment {
				updateComment.add(addr, comment)
			}
		}
	}
	for _, it := range all.Items() {
		addr := it.Key
		info, _ := it.Value.(*payload.Map)
		var aliases []any
		hasAliases := false
		if info != nil {
			if a, ok := info.Get("aliases"); ok {
				aliases, hasAliases = anyList(a), true
			}
		}
		named := hasAliases && containsPy(aliases, name)
		if !containsPy(ips, addr) {
			if named {
				if payload.Truthy(c.Args.Get("clean")) {
					toRemove.add(addr, name)
				} else {
					ret.Warnings = append(ret.Warnings, fmt.Sprintf("Host %[1]s present for IP address %[2]s. To get rid of this warning, either run this state with 'clean' set to True to remove %[1]s from %[2]s, or add %[2]s to the 'ip' argument.", name, pyfmt.Str(addr)))
				}
			}
			continue
		}
		if named {
			cur, hasCur := info.Get("comment")
			switch {
			case hasComment && hasCur && !pyfmt.Equal(cur, comment):
				updateComment.add(addr, comment)
			case hasComment && !hasCur:
				updateComment.add(addr, comment)
			default:
				comments = append(comments, fmt.Sprintf("Host %s (%s) already present", name, pyfmt.Str(addr)))
			}
			continue
		}
		if _, err := netip.ParseAddr(pyfmt.Str(addr)); err == nil {
			toAdd.add(addr, name)
			if hasComment {
				updateComment.add(addr, comment)
			}
		} else {
			ret.Result = states.False
			comments = append(comments, fmt.Sprintf("Invalid IP Address for %s (%s)", name, pyfmt.Str(addr)))
		}
	}
	for _, p := range toAdd {
		if c.Test {
			ret.Result = states.None
			comments = append(comments, fmt.Sprintf("Host %s (%s) would be added", pyfmt.Str(p.val), pyfmt.Str(p.addr)))
		} else {
			ok, err := sbExec(ctx, c, "hosts.add_host", []any{p.addr, p.val}, nil)
			if err != nil {
				return ret, err
			}
			if !payload.Truthy(ok) {
				ret.Result = states.False
				comments = append(comments, fmt.Sprintf("Failed to add host %s (%s)", pyfmt.Str(p.val), pyfmt.Str(p.addr)))
				continue
			}
			comments = append(comments, fmt.Sprintf("Added host %s (%s)", pyfmt.Str(p.val), pyfmt.Str(p.addr)))
		}
		setdefaultList(ret.Changes, "added", p.addr, p.val)
	}
	for _, p := range updateComment {
		if c.Test {
			comments = append(comments, fmt.Sprintf("Comment for %s (%s) would be added", pyfmt.Str(p.addr), pyfmt.Str(p.val)))
		} else {
			ok, err := sbExec(ctx, c, "hosts.set_comment", []any{p.addr, p.val}, nil)
			if err != nil {
				return ret, err
			}
			if !payload.Truthy(ok) {
				ret.Result = states.False
				comments = append(comments, fmt.Sprintf("Failed to add comment for host %s (%s)", pyfmt.Str(p.addr), pyfmt.Str(p.val)))
				continue
			}
			comments = append(comments, fmt.Sprintf("Set comment for host %s (%s)", pyfmt.Str(p.addr), pyfmt.Str(p.val)))
		}
		setdefaultList(ret.Changes, "comment_added", p.addr, p.val)
	}
	for _, p := range toRemove {
		if c.Test {
			ret.Result = states.None
			comments = append(comments, fmt.Sprintf("Host %s (%s) would be removed", pyfmt.Str(p.val), pyfmt.Str(p.addr)))
		} else {
			ok, err := sbExec(ctx, c, "hosts.rm_host", []any{p.addr, p.val}, nil)
			if err != nil {
				return ret, err
			}
			if !payload.Truthy(ok) {
				ret.Result = states.False
				comments = append(comments, fmt.Sprintf("Failed to remove host %s (%s)", pyfmt.Str(p.val), pyfmt.Str(p.addr)))
				continue
			}
			comments = append(comments, fmt.Sprintf("Removed host %s (%s)", pyfmt.Str(p.val), pyfmt.Str(p.addr)))
		}
		setdefaultList(ret.Changes, "removed", p.addr, p.val)
	}
	ret.Comment = strings.Join(comments, "\n")
	return ret, nil
}

func hostAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	var comments []string
	for _, ip := range anyList(c.Args.Get("ip")) {
		has, err := sbExec(ctx, c, "hosts.has_pair", []any{ip, name}, nil)
		if err != nil {
			return ret, err
		}
		switch {
		case !payload.Truthy(has):
			ret.Result = states.True
			comments = append(comments, fmt.Sprintf("Host %s (%s) already absent", name, pyfmt.Str(ip)))
		case c.Test:
			comments = append(comments, fmt.Sprintf("Host %s (%s) needs to be removed", name, pyfmt.Str(ip)))
		default:
			ok, err := sbExec(ctx, c, "hosts.rm_host", []any{ip, name}, nil)
			if err != nil {
				return ret, err
			}
			if payload.Truthy(ok) {
				ret.Changes = payload.NewMap("host", name)
				ret.Result = states.True
				comments = append(comments, fmt.Sprintf("Removed host %s (%s)", name, pyfmt.Str(ip)))
			} else {
				ret.Result = states.False
				comments = append(comments, "Failed to remove host")
			}
		}
	}
	ret.Comment = strings.Join(comments, "\n")
	return ret, nil
}

func hostOnly(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	var names []string
	for _, h := range anyList(c.Args.Get("hostnames")) {
		names = append(names, strings.TrimSpace(pyfmt.Str(h)))
	}
	cur, err := sbExec(ctx, c, "hosts.get_alias", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	var olds []string
	for _, a := range anyList(cur) {
		olds = append(olds, pyfmt.Str(a))
	}
	if l, ok := cur.([]any); ok && len(l) == 0 {
		olds = nil
	}
	old, nw := strings.Join(olds, " "), strings.Join(names, " ")
	if old == nw {
		ret.Comment = fmt.Sprintf("IP address %s already set to \"%s\"", name, nw)
		ret.Result = states.True
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Would change %s from \"%s\" to \"%s\"", name, old, nw)
		return ret, nil
	}
	ok, err := sbExec(ctx, c, "hosts.set_host", []any{name, nw}, nil)
	if err != nil {
		return ret, err
	}
	ret.Result = states.ResultOf(payload.Truthy(ok))
	if !payload.Truthy(ok) {
		ret.Comment = fmt.Sprintf("hosts.set_host failed to change %s from \"%s\" to \"%s\"", name, old, nw)
		return ret, nil
	}
	ret.Comment = fmt.Sprintf("successfully changed %s from \"%s\" to \"%s\"", name, old, nw)
	ret.Changes = payload.NewMap(name, payload.NewMap("old", old, "new", nw))
	return ret, nil
}
