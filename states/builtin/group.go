package builtin

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's group state module (salt/states/group.py) over the
// group execution module.

func groupStates() []states.Function {
	return []states.Function{
		{Name: "group.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("gid", nil), sbOpt("system", false), sbOpt("addusers", nil),
			sbOpt("delusers", nil), sbOpt("members", nil), sbOpt("non_unique", false)}}, Fn: groupPresent},
		{Name: "group.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}}, Fn: groupAbsent},
	}
}

// strList is a list argument as strings (nil for None).
func strList(v any) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, x := range anyList(v) {
		out = append(out, pyfmt.Str(x))
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func inStrs(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// groupChange is one entry of _changes (ordered as Salt builds it).
type groupChange struct {
	key string
	val any
	// repr is str(val) for the comment.
	repr string
}

// groupChanges is group._changes: nil with exists false when the group
// is missing.
func groupChanges(ctx context.Context, c *states.Call, name string, gid any, add, del, members []string, membersGiven bool) ([]groupChange, bool, string, error) {
	info, err := sbExec(ctx, c, "group.info", []any{name}, nil)
	if err != nil {
		return nil, false, "", err
	}
	lg, _ := info.(*payload.Map)
	if lg == nil || lg.Len() == 0 {
		return nil, false, "", nil
	}
	cur := strList(lg.List("members"))
	var ch []groupChange
	if payload.Truthy(gid) {
		n, err := strconv.ParseInt(strings.TrimSpace(pyfmt.Str(gid)), 10, 64)
		if err != nil {
			// Salt's _changes returns a ret dict here, which present
			// then reads as changes.
			return []groupChange{{"result", false, "False"}, {"comment", "Invalid gid", "Invalid gid"}}, true, "", nil
		}
		if have, _ := lg.Int("gid"); have != n {
			ch = append(ch, groupChange{"gid", n, strconv.FormatInt(n, 10)})
		}
	}
	symDiff := func(a, b []string) bool {
		for _, x := range a {
			if !inStrs(b, x) {
				return true
			}
		}
		for _, x := range b {
			if !inStrs(a, x) {
				return true
			}
		}
		return false
	}
	switch {
	case membersGiven && len(members) == 0:
		if symDiff(cur, members) {
			set := make([]any, 0, len(cur))
			seen := map[string]bool{}
			for _, m := range cur {
				if !seen[m] {
					seen[m] = true
					set = append(set, m)
				}
			}
			repr := "set()"
			if len(set) > 0 {
				parts := make([]string, len(set))
				for i, x := range set {
					parts[i] = pyfmt.Repr(x)
				}
				repr = "{" + strings.Join(parts, ", ") + "}"
			}
			ch = append(ch, groupChange{"delusers", set, repr})
		}
	case len(members) > 0:
		if symDiff(cur, members) {
			l := toAnyStrs(members)
			ch = append(ch, groupChange{"members", l, pyfmt.Repr(l)})
		}
	}
	var toAdd []string
	for _, u := range add {
		if !inStrs(cur, u) {
			toAdd = append(toAdd, u)
		}
	}
	if len(toAdd) > 0 {
		l := toAnyStrs(toAdd)
		ch = append(ch, groupChange{"addusers", l, pyfmt.Repr(l)})
	}
	var toDel []string
	for _, u := range del {
		if inStrs(cur, u) {
			toDel = append(toDel, u)
		}
	}
	if len(toDel) > 0 {
		// A later delusers replaces the one from members=[].
		for i := range ch {
			if ch[i].key == "delusers" {
				ch = append(ch[:i], ch[i+1:]...)
				break
			}
		}
		l := toAnyStrs(toDel)
		ch = append(ch, groupChange{"delusers", l, pyfmt.Repr(l)})
	}
	return ch, true, "", nil
}

func toAnyStrs(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func groupChangesMap(ch []groupChange) *payload.Map {
	m := &payload.Map{}
	for _, x := range ch {
		m.Set(x.key, x.val)
	}
	return m
}

func groupPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("Group %s is present and up to date", name)}
	gid := c.Args.Get("gid")
	add, del := strList(c.Args.Get("addusers")), strList(c.Args.Get("delusers"))
	members := strList(c.Args.Get("members"))
	membersGiven := c.Args.Get("members") != nil
	nonUnique := c.Args.Get("non_unique")
	if membersGiven && (c.Args.Get("addusers") != nil || c.Args.Get("delusers") != nil) {
		ret.Result = states.None
		ret.Comment = `Error: Conflicting options "members" with "addusers" and/or "delusers" can not be used together. `
		return ret, nil
	}
	if len(add) > 0 && len(del) > 0 {
		for _, u := range add {
			if inStrs(del, u) {
				ret.Result = states.None
				ret.Comment = "Error. Same user(s) can not be added and deleted simultaneously"
				return ret, nil
			}
		}
	}
	ch, exists, _, err := groupChanges(ctx, c, name, gid, add, del, members, membersGiven)
	if err != nil {
		return ret, err
	}
	if len(ch) > 0 {
		ret.Comment = "The following group attributes are set to be changed:\n"
		for _, x := range ch {
			ret.Comment += fmt.Sprintf("%s: %s\n", x.key, x.repr)
		}
		if c.Test {
			ret.Result = states.None
			return ret, nil
		}
		for _, x := range ch {
			var err error
			switch x.key {
			case "gid":
				_, err = sbExec(ctx, c, "group.chgid", []any{name, gid}, payload.NewMap("non_unique", nonUnique))
			case "addusers", "delusers":
				fun := "group.adduser"
				if x.key == "delusers" {
					fun = "group.deluser"
				}
				for _, u := range x.val.([]any) {
					if _, err = sbExec(ctx, c, fun, []any{name, u}, nil); err != nil {
						break
					}
				}
			case "members":
				_, err = sbExec(ctx, c, "group.members", []any{name, strings.Join(members, ",")}, nil)
			}
			if err != nil {
				return ret, err
			}
		}
		after, _, _, err := groupChanges(ctx, c, name, gid, add, del, members, membersGiven)
		if err != nil {
			return ret, err
		}
		if len(after) > 0 {
			ret.Result = states.False
			ret.Comment += "Some changes could not be applied"
			ret.Changes = payload.NewMap("Failed", groupChangesMap(after))
		} else {
			ret.Changes = payload.NewMap("Final", "All changes applied successfully")
		}
	}
	if exists {
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Group %s set to be added", name)
		return ret, nil
	}
	if gid != nil && !payload.Truthy(nonUnique) {
		all, err := sbExec(ctx, c, "group.getent", nil, nil)
		if err != nil {
			return ret, err
		}
		for _, g := range anyList(all) {
			gm, ok := g.(*payload.Map)
			if !ok {
				continue
			}
			if have, _ := gm.Get("gid"); pyfmt.Equal(have, gid) {
				ret.Result = states.False
				ret.Comment = fmt.Sprintf("Group %s is not present but gid %s is already taken by group %s", name, pyfmt.Str(gid), gm.Str("name"))
				return ret, nil
			}
		}
	}
	ok, err := sbExec(ctx, c, "group.add", []any{name}, payload.NewMap("gid", gid, "system", c.Args.Get("system"), "non_unique", nonUnique))
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(ok) {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to create new group %s", name)
		return ret, nil
	}
	grpMembers := ""
	if len(members) > 0 {
		grpMembers = strings.Join(members, ",")
	}
	if len(add) > 0 {
		grpMembers = strings.Join(add, ",")
	}
	if grpMembers != "" {
		if _, err := sbExec(ctx, c, "group.members", []any{name, grpMembers}, nil); err != nil {
			return ret, err
		}
	}
	ret.Comment = fmt.Sprintf("New group %s created", name)
	info, err := sbExec(ctx, c, "group.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if m, ok := info.(*payload.Map); ok {
		ret.Changes = m
	}
	after, _, _, err := groupChanges(ctx, c, name, gid, add, del, members, membersGiven)
	if err != nil {
		return ret, err
	}
	if len(after) > 0 {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Group %s has been created but, some changes could not be applied", name)
		ret.Changes = payload.NewMap("Failed", groupChangesMap(after))
	}
	return ret, nil
}

func groupAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	info, err := sbExec(ctx, c, "group.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if m, ok := info.(*payload.Map); !ok || m.Len() == 0 {
		ret.Comment = "Group not present"
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Group %s is set for removal", name)
		return ret, nil
	}
	ok, err := sbExec(ctx, c, "group.delete", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Changes = payload.NewMap(name, "")
		ret.Comment = fmt.Sprintf("Removed group %s", name)
		return ret, nil
	}
	ret.Result = states.False
	ret.Comment = fmt.Sprintf("Failed to remove group %s", name)
	return ret, nil
}
