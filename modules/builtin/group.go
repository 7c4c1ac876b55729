package builtin

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// groupFormat is groupadd._format_info.
func groupFormat(g groupEntry) *payload.Map {
	mem := make([]any, 0, len(g.members))
	for _, m := range g.members {
		mem = append(mem, m)
	}
	return payload.NewMap("name", g.name, "passwd", g.passwd, "gid", g.gid, "members", mem)
}

func groupInfo(c *modules.Call, name string) *payload.Map {
	for _, g := range mustGroups(userRoot(c)) {
		if g.name == name {
			return groupFormat(g)
		}
	}
	return &payload.Map{}
}

// groupRetcode runs argv and returns "not retcode".
func groupRetcode(ctx context.Context, argv []string) (any, error) {
	res, err := pkgRun(ctx, argv, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	return res.retcode == 0, nil
}

// groupFunctions is Salt's groupadd module (the group virtual module on
// Linux).
func groupFunctions() []modules.Function {
	rootP := opt("root", nil)
	return []modules.Function{
		{Name: "group.info", Spec: modules.Spec{Params: []modules.Param{req("name"), rootP}},
			Doc: "Return information about a group\n\nname\n    Name of the group\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' group.info foo",
			Fn:  func(_ context.Context, c *modules.Call) (any, error) { return groupInfo(c, c.Args.Str("name")), nil }},
		{Name: "group.getent", Spec: modules.Spec{Params: []modules.Param{opt("refresh", false), rootP}},
			Doc: "Return info on all groups\n\nrefresh\n    Force a refresh of group information\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' group.getent",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				groups, err := readGroups(userRoot(c))
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				ret := []any{}
				for _, g := range groups {
					ret = append(ret, groupFormat(g))
				}
				return ret, nil
			}},
		{Name: "group.add", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("gid", nil), opt("system", false), rootP, opt("non_unique", false)}},
			Doc: "Add the specified group\n\nname\n    Name of the new group\n\ngid\n    Use GID for the new group\n\nsystem\n    Create a system account\n\nroot\n    Directory to chroot into\n\nnon_unique\n    Allow creating groups with duplicate (non-unique) GIDs\n\nCLI Example:\n\n    salt '*' group.add foo 3456",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				bin, err := which("groupadd")
				if err != nil {
					return nil, err
				}
				cmd := []string{bin}
				if gid := c.Args.Get("gid"); payload.Truthy(gid) {
					// Salt passes "-g N" as one argument.
					cmd = append(cmd, "-g "+pyfmt.Str(gid))
					if argsBool(c, "non_unique") {
						cmd = append(cmd, "-o")
					}
				}
				if argsBool(c, "system") {
					cmd = append(cmd, "-r")
				}
				if r := userRoot(c); r != "" {
					cmd = append(cmd, "-R", r)
				}
				return groupRetcode(ctx, append(cmd, c.Args.Str("name")))
			}},
		{Name: "group.delete", Spec: modules.Spec{Params: []modules.Param{req("name"), rootP}},
			Doc: "Remove the named group\n\nname\n    Name group to delete\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' group.delete foo",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				bin, err := which("groupdel")
				if err != nil {
					return nil, err
				}
				cmd := []string{bin}
				if r := userRoot(c); r != "" {
					cmd = append(cmd, "-R", r)
				}
				return groupRetcode(ctx, append(cmd, c.Args.Str("name")))
			}},
		{Name: "group.chgid", Spec: modules.Spec{Params: []modules.Param{req("name"), req("gid"), rootP, opt("non_unique", false)}},
			Doc: "Change the gid for a named group\n\nCLI Example:\n\n    salt '*' group.chgid foo 4376",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				name, gid := c.Args.Str("name"), c.Args.Get("gid")
				pre := groupInfo(c, name)
				if pre.Len() == 0 {
					return false, nil
				}
				if cur, _ := pre.Get("gid"); pyEq(cur, gid) {
					return true, nil
				}
				bin, err := which("groupmod")
				if err != nil {
					return nil, err
				}
				cmd := []string{bin}
				if r := userRoot(c); r != "" {
					cmd = append(cmd, "-R", r)
				}
				param := "-g"
				if argsBool(c, "non_unique") {
					param = "-og"
				}
				if _, err := pkgRun(ctx, append(cmd, param, pyfmt.Str(gid), name), pkgRunOpts{combined: true}); err != nil {
					return nil, err
				}
				post, _ := groupInfo(c, name).Get("gid")
				return pyEq(post, gid), nil
			}},
		{Name: "group.adduser", Spec: modules.Spec{Params: []modules.Param{req("name"), req("username"), rootP}},
			Doc: "Add a user in the group.\n\nname\n    Name of the group to modify\n\nusername\n    Username to add to the group\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' group.adduser foo bar",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				bin, err := which("gpasswd")
				if err != nil {
					return nil, err
				}
				cmd := []string{bin, "--add", c.Args.Str("username"), c.Args.Str("name")}
				if r := userRoot(c); r != "" {
					cmd = append(cmd, "--root", r)
				}
				return groupRetcode(ctx, cmd)
			}},
		{Name: "group.deluser", Spec: modules.Spec{Params: []modules.Param{req("name"), req("username"), rootP}},
			Doc: "Remove a user from the group.\n\nname\n    Name of the group to modify\n\nusername\n    Username to delete from the group\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' group.deluser foo bar",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				// Salt looks the group up without root.
				found := false
				for _, g := range mustGroups("") {
					if g.name != c.Args.Str("name") {
						continue
					}
					for _, m := range g.members {
						found = found || m == c.Args.Str("username")
					}
				}
				if !found {
					return true, nil
				}
				bin, err := which("gpasswd")
				if err != nil {
					return nil, err
				}
				cmd := []string{bin, "--del", c.Args.Str("username"), c.Args.Str("name")}
				if r := userRoot(c); r != "" {
					cmd = append(cmd, "--root", r)
				}
				return groupRetcode(ctx, cmd)
			}},
		{Name: "group.members", Spec: modules.Spec{Params: []modules.Param{req("name"), req("members_list"), rootP}},
			Doc: "Replaces members of the group with a provided list.\n\nname\n    Name of the group to modify\n\nmembers_list\n    Username list to set into the group\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' group.members foo 'user1,user2,user3,...'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				bin, err := which("gpasswd")
				if err != nil {
					return nil, err
				}
				cmd := []string{bin, "--members", c.Args.Str("members_list"), c.Args.Str("name")}
				if r := userRoot(c); r != "" {
					cmd = append(cmd, "--root", r)
				}
				return groupRetcode(ctx, cmd)
			}},
	}
}
