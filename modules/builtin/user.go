package builtin

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/py"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// passwdEntry is one line of /etc/passwd.
type passwdEntry struct {
	name, passwd string
	uid, gid     int64
	gecos        string
	home, shell  string
}

// groupEntry is one line of /etc/group.
type groupEntry struct {
	name, passwd string
	gid          int64
	members      []string
}

// readPasswd parses root/etc/passwd (root "" is /). Lines that do not
// have seven fields or numeric ids are skipped (Python raises on them).
func readPasswd(root string) ([]passwdEntry, error) {
	if root == "" {
		root = "/"
	}
	f, err := os.Open(filepath.Join(root, "etc/passwd"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []passwdEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		comps := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(comps) != 7 {
			continue
		}
		uid, err1 := strconv.ParseInt(comps[2], 10, 64)
		gid, err2 := strconv.ParseInt(comps[3], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, passwdEntry{comps[0], comps[1], uid, gid, comps[4], comps[5], comps[6]})
	}
	return out, sc.Err()
}

// readGroups parses root/etc/group.
func readGroups(root string) ([]groupEntry, error) {
	if root == "" {
		root = "/"
	}
	f, err := os.Open(filepath.Join(root, "etc/group"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []groupEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		comps := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(comps) != 4 {
			continue
		}
		gid, err := strconv.ParseInt(comps[2], 10, 64)
		if err != nil {
			continue
		}
		var mem []string
		if comps[3] != "" {
			mem = strings.Split(comps[3], ",")
		}
		out = append(out, groupEntry{comps[0], comps[1], gid, mem})
	}
	return out, sc.Err()
}

// userLookup is pwd.getpwnam (or _getpwnam under root).
func userLookup(name, root string) (passwdEntry, bool) {
	all, err := readPasswd(root)
	if err != nil {
		return passwdEntry{}, false
	}
	for _, e := range all {
		if e.name == name {
			return e, true
		}
	}
	return passwdEntry{}, false
}

// userGroupList is salt.utils.user.get_group_list: the sorted names of the
// system groups the user is a member of, with its primary group.
func userGroupList(name string) []any {
	groups, _ := readGroups("")
	primary := int64(-1)
	if e, ok := userLookup(name, ""); ok {
		primary = e.gid
	}
	set := map[string]bool{}
	for _, g := range groups {
		if g.gid == primary {
			set[g.name] = true
			continue
		}
		for _, m := range g.members {
			if m == name {
				set[g.name] = true
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// userFormat is useradd._format_info.
func userFormat(e passwdEntry) *payload.Map {
	g := strings.SplitN(e.gecos, ",", 5)
	for len(g) < 5 {
		g = append(g, "")
	}
	return payload.NewMap("gid", e.gid, "groups", userGroupList(e.name), "home", e.home, "name", e.name, "passwd", e.passwd,
		"shell", e.shell, "uid", e.uid, "fullname", g[0], "roomnumber", g[1], "workphone", g[2], "homephone", g[3], "other", g[4])
}

// userRoot is the root argument ("" for none).
func userRoot(c *modules.Call) string {
	if v := c.Args.Get("root"); v != nil {
		return pyfmt.Str(v)
	}
	return ""
}

func userInfo(c *modules.Call, name string) *payload.Map {
	e, ok := userLookup(name, userRoot(c))
	if !ok {
		return &payload.Map{}
	}
	return userFormat(e)
}

// which is salt.utils.path.which with _which's error.
func which(cmd string) (string, error) {
	p, err := exec.LookPath(cmd)
	if err != nil {
		return "", fmt.Errorf("%w: Command '%s' cannot be found", modules.ErrExecution, cmd)
	}
	return p, nil
}

// userFunctions is Salt's useradd module (the user virtual module on
// Linux): reads of /etc/passwd and /etc/group, changes with useradd,
// usermod and userdel.
func userFunctions() []modules.Function {
	rootP := opt("root", nil)
	nameRoot := modules.Spec{Params: []modules.Param{req("name"), rootP}}
	return []modules.Function{
		{Name: "user.info", Spec: nameRoot, Doc: "Return user information\n\nname\n    User to get the information\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' user.info root",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return userInfo(c, c.Args.Str("name")), nil }},
		{Name: "user.list_users", Spec: modules.Spec{Params: []modules.Param{rootP}}, Doc: "Return a list of all users\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' user.list_users",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return sortedNames(readPasswd(userRoot(c)))(func(e passwdEntry) string { return e.name })
			}},
		{Name: "user.getent", Spec: modules.Spec{Params: []modules.Param{opt("refresh", false), rootP}}, Doc: "Return the list of all info for all users\n\nrefresh\n    Force a refresh of user information\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' user.getent",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				all, err := readPasswd(userRoot(c))
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				ret := []any{}
				for _, e := range all {
					ret = append(ret, userFormat(e))
				}
				return ret, nil
			}},
		{Name: "user.list_groups", Spec: modules.Spec{Params: []modules.Param{req("name")}}, Doc: "Return a list of groups the named user belongs to\n\nname\n    User to get the information\n\nCLI Example:\n\n    salt '*' user.list_groups foo",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return userGroupList(c.Args.Str("name")), nil }},
		{Name: "user.primary_group", Spec: modules.Spec{Params: []modules.Param{req("name")}}, Doc: "Return the primary group of the named user\n\nname\n    User to get the information\n\nCLI Example:\n\n    salt '*' user.primary_group saltadmin",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := pkgRun(ctx, []string{"id", "-g", "-n", c.Args.Str("name")}, pkgRunOpts{combined: true})
				if err != nil {
					return nil, err
				}
				return res.stdout, nil
			}},
		{Name: "user.add", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("uid", nil), opt("gid", nil), opt("groups", nil), opt("home", nil), opt("shell", nil),
			opt("unique", true), opt("system", false), opt("fullname", ""), opt("roomnumber", ""), opt("workphone", ""), opt("homephone", ""), opt("other", ""),
			opt("createhome", true), opt("loginclass", nil), opt("nologinit", false), rootP, opt("usergroup", nil)}},
			Doc: "Add a user to the minion\n\nCLI Example:\n\n    salt '*' user.add name <uid> <gid> <groups> <home> <shell>", Fn: userAdd},
		{Name: "user.delete", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("remove", false), opt("force", false), rootP}},
			Doc: "Remove a user from the minion\n\nname\n    Username to delete\n\nremove\n    Remove home directory and mail spool\n\nforce\n    Force some actions that would fail otherwise\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' user.delete name remove=True force=True",
			Fn:  userDelete},
		{Name: "user.chuid", Spec: modules.Spec{Params: []modules.Param{req("name"), req("uid"), rootP}}, Doc: "Change the uid for a named user\n\nCLI Example:\n\n    salt '*' user.chuid foo 4376",
			Fn: userChattrib("uid", "-u", "uid")},
		{Name: "user.chgid", Spec: modules.Spec{Params: []modules.Param{req("name"), req("gid"), rootP}}, Doc: "Change the default group of the user\n\nCLI Example:\n\n    salt '*' user.chgid foo 4376",
			Fn: userChattrib("gid", "-g", "gid")},
		{Name: "user.chshell", Spec: modules.Spec{Params: []modules.Param{req("name"), req("shell"), rootP}}, Doc: "Change the default shell of the user\n\nCLI Example:\n\n    salt '*' user.chshell foo /bin/zsh",
			Fn: userChattrib("shell", "-s", "shell")},
		{Name: "user.get_loginclass", Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Doc: "Get the login class of the user\n\nname\n    User to get the information\n\n.. note::\n    This function only applies to OpenBSD systems.\n\nCLI Example:\n\n    salt '*' user.get_loginclass foo",
			Fn:  userLoginclass},
		{Name: "user.chloginclass", Spec: modules.Spec{Params: []modules.Param{req("name"), req("loginclass"), rootP}},
			Doc: "Change the default login class of the user\n\nname\n    User to modify\n\nloginclass\n    Login class for the new account\n\nroot\n    Directory to chroot into\n\n.. note::\n    This function only applies to OpenBSD systems.\n\nCLI Example:\n\n    salt '*' user.chloginclass foo staff",
			Fn:  userLoginclass},
		{Name: "user.chhome", Spec: modules.Spec{Params: []modules.Param{req("name"), req("home"), opt("persist", false), rootP}}, Doc: "Change the home directory of the user, pass True for persist to move files\nto the new home directory if the old home directory exist.\n\nCLI Example:\n\n    salt '*' user.chhome foo /home/users/foo True",
			Fn: userChattrib("home", "-d", "home")},
		{Name: "user.rename", Spec: modules.Spec{Params: []modules.Param{req("name"), req("new_name"), rootP}}, Doc: "Change the username for a named user\n\nCLI Example:\n\n    salt '*' user.rename name new_name",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if userInfo(c, c.Args.Str("new_name")).Len() > 0 {
					return nil, fmt.Errorf("%w: User '%s' already exists", modules.ErrExecution, c.Args.Str("new_name"))
				}
				return userChattribDo(ctx, c, "name", "-l", c.Args.Get("new_name"), false)
			}},
		{Name: "user.chgroups", Spec: modules.Spec{Params: []modules.Param{req("name"), req("groups"), opt("append", false), rootP}},
			Doc: "Change the groups to which this user belongs\n\nname\n    User to modify\n\ngroups\n    Groups to set for the user\n\nappend : False\n    If ``True``, append the specified group(s). Otherwise, this function\n    will replace the user's groups with the specified group(s).\n\nCLI Examples:\n\n    salt '*' user.chgroups foo wheel,root",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return userChgroups(ctx, c, c.Args.Str("name"), c.Args.Get("groups"), argsBool(c, "append"))
			}},
		{Name: "user.chfullname", Spec: modules.Spec{Params: []modules.Param{req("name"), req("fullname"), rootP}}, Doc: "Change the user's Full Name\n\nCLI Example:\n\n    salt '*' user.chfullname foo \"Foo Bar\"",
			Fn: userGecosFn("fullname")},
		{Name: "user.chroomnumber", Spec: modules.Spec{Params: []modules.Param{req("name"), req("roomnumber"), rootP}}, Doc: "Change the user's Room Number\n\nCLI Example:\n\n    salt '*' user.chroomnumber foo 123",
			Fn: userGecosFn("roomnumber")},
		{Name: "user.chworkphone", Spec: modules.Spec{Params: []modules.Param{req("name"), req("workphone"), rootP}}, Doc: "Change the user's Work Phone\n\nCLI Example:\n\n    salt '*' user.chworkphone foo 7735550123",
			Fn: userGecosFn("workphone")},
		{Name: "user.chhomephone", Spec: modules.Spec{Params: []modules.Param{req("name"), req("homephone"), rootP}}, Doc: "Change the user's Home Phone\n\nCLI Example:\n\n    salt '*' user.chhomephone foo 7735551234",
			Fn: userGecosFn("homephone")},
		{Name: "user.chother", Spec: modules.Spec{Params: []modules.Param{req("name"), req("other"), rootP}}, Doc: "Change the user's other GECOS attribute\n\nCLI Example:\n\n    salt '*' user.chother foobar",
			Fn: userGecosFn("other")},
	}
}

func userRun(ctx context.Context, argv []string) (pkgCmdResult, error) {
	return pkgRun(ctx, argv, pkgRunOpts{})
}

func userAdd(ctx context.Context, c *modules.Call) (any, error) {
	bin, err := which("useradd")
	if err != nil {
		return nil, err
	}
	name := c.Args.Str("name")
	cmd := []string{bin}
	if v := c.Args.Get("shell"); payload.Truthy(v) {
		cmd = append(cmd, "-s", pyfmt.Str(v))
	}
	if v := c.Args.Get("uid"); v != nil && v != "" {
		cmd = append(cmd, "-u", pyfmt.Str(v))
	}
	groups := c.Args.Get("groups")
	switch gid := c.Args.Get("gid"); {
	case gid != nil && gid != "":
		cmd = append(cmd, "-g", pyfmt.Str(gid))
	case payload.Truthy(c.Args.Get("usergroup")):
		cmd = append(cmd, "-U")
	case groups != nil && userInGroups(name, groups):
		if b, err := os.ReadFile("/etc/login.defs"); err == nil {
			for _, line := range py.FileLines(string(b)) {
				if !strings.Contains(line[:min(15, len(line))], "USERGROUPS_ENAB") {
					continue
				}
				if strings.Contains(line, "yes") {
					for _, g := range mustGroups("") {
						if g.name == name {
							cmd = append(cmd, "-g", strconv.FormatInt(g.gid, 10))
						}
					}
				}
				break
			}
		}
	}
	if c.Args.Get("usergroup") == false {
		cmd = append(cmd, "-N")
	}
	if argsBool(c, "createhome") {
		cmd = append(cmd, "-m")
	} else {
		cmd = append(cmd, "-M")
	}
	if argsBool(c, "nologinit") {
		cmd = append(cmd, "-l")
	}
	if v := c.Args.Get("home"); v != nil {
		cmd = append(cmd, "-d", pyfmt.Str(v))
	}
	if !argsBool(c, "unique") {
		cmd = append(cmd, "-o")
	}
	if argsBool(c, "system") {
		cmd = append(cmd, "-r")
	}
	cmd = append(cmd, name)
	if r := userRoot(c); r != "" {
		cmd = append(cmd, "-R", r)
	}
	res, err := userRun(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if res.retcode != 0 {
		c.Log().Error("useradd failed", "stderr", res.stderr)
		return false, nil
	}
	if payload.Truthy(groups) {
		if _, err := userChgroups(ctx, c, name, groups, false); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"fullname", "roomnumber", "workphone", "homephone", "other"} {
		if v := c.Args.Get(k); payload.Truthy(v) {
			if _, err := userUpdateGecos(ctx, c, name, k, v); err != nil {
				return nil, err
			}
		}
	}
	return true, nil
}

func mustGroups(root string) []groupEntry {
	g, _ := readGroups(root)
	return g
}

// userInGroups is "name in groups" on a list or a string.
func userInGroups(name string, groups any) bool {
	switch g := groups.(type) {
	case string:
		return strings.Contains(g, name)
	case []any:
		for _, x := range g {
			if pyfmt.Str(x) == name {
				return true
			}
		}
	}
	return false
}

func userDelete(ctx context.Context, c *modules.Call) (any, error) {
	bin, err := which("userdel")
	if err != nil {
		return nil, err
	}
	cmd := []string{bin}
	if argsBool(c, "remove") {
		cmd = append(cmd, "-r")
	}
	if argsBool(c, "force") {
		cmd = append(cmd, "-f")
	}
	cmd = append(cmd, c.Args.Str("name"))
	if r := userRoot(c); r != "" {
		cmd = append(cmd, "-R", r)
	}
	res, err := userRun(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if res.retcode == 0 {
		return true, nil
	}
	if res.retcode == 12 && grainsData(c).Str("os_family") == "Debian" &&
		(strings.Contains(res.stderr, "var/mail") || strings.Contains(res.stderr, "var/spool/mail")) {
		return true, nil
	}
	return false, nil
}

func userChattrib(key, param, arg string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		return userChattribDo(ctx, c, key, param, c.Args.Get(arg), key == "home" && argsBool(c, "persist"))
	}
}

// userChattribDo is useradd._chattrib.
func userChattribDo(ctx context.Context, c *modules.Call, key, param string, value any, persist bool) (any, error) {
	name := c.Args.Str("name")
	pre := userInfo(c, name)
	if pre.Len() == 0 {
		return nil, fmt.Errorf("%w: User '%s' does not exist", modules.ErrExecution, name)
	}
	if cur, _ := pre.Get(key); pyEq(cur, value) {
		return true, nil
	}
	bin, err := which("usermod")
	if err != nil {
		return nil, err
	}
	cmd := []string{bin}
	if r := userRoot(c); r != "" {
		cmd = append(cmd, "-R", r)
	}
	if persist {
		cmd = append(cmd, "-m")
	}
	cmd = append(cmd, param, pyfmt.Str(value), name)
	if _, err := pkgRun(ctx, cmd, pkgRunOpts{combined: true}); err != nil {
		return nil, err
	}
	newName := name
	if key == "name" {
		newName = pyfmt.Str(value)
	}
	post, _ := userInfo(c, newName).Get(key)
	return pyEq(post, value), nil
}

func userGecosFn(key string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		return userUpdateGecos(ctx, c, c.Args.Str("name"), key, c.Args.Get(key))
	}
}

// userUpdateGecos is useradd._update_gecos.
func userUpdateGecos(ctx context.Context, c *modules.Call, name, key string, v any) (any, error) {
	value := ""
	if v != nil {
		value = pyfmt.Str(v)
	}
	pre := userInfo(c, name)
	if pre.Len() == 0 {
		return false, nil
	}
	if pre.Str(key) == value {
		return true, nil
	}
	fields := map[string]string{}
	for _, k := range []string{"fullname", "roomnumber", "workphone", "homephone", "other"} {
		fields[k] = pre.Str(k)
	}
	fields[key] = value
	gecos := strings.TrimRight(strings.Join([]string{fields["fullname"], fields["roomnumber"], fields["workphone"], fields["homephone"], fields["other"]}, ","), ",")
	bin, err := which("usermod")
	if err != nil {
		return nil, err
	}
	cmd := []string{bin}
	if r := userRoot(c); r != "" {
		cmd = append(cmd, "-R", r)
	}
	cmd = append(cmd, "-c", gecos, name)
	if _, err := pkgRun(ctx, cmd, pkgRunOpts{combined: true}); err != nil {
		return nil, err
	}
	return userInfo(c, name).Str(key) == value, nil
}

// userChgroups is useradd.chgroups.
func userChgroups(ctx context.Context, c *modules.Call, name string, groupsV any, appendG bool) (any, error) {
	var groups []string
	switch g := groupsV.(type) {
	case string:
		groups = strings.Split(g, ",")
	case []any:
		for _, x := range g {
			groups = append(groups, pyfmt.Str(x))
		}
	default:
		return nil, fmt.Errorf("%w: groups must be a list or a comma-separated string", modules.ErrInvocation)
	}
	have := map[string]bool{}
	for _, g := range userGroupList(name) {
		have[g.(string)] = true
	}
	want := map[string]bool{}
	for _, g := range groups {
		want[g] = true
	}
	same := len(have) == len(want)
	for g := range want {
		same = same && have[g]
	}
	if same {
		return true, nil
	}
	bin, err := which("usermod")
	if err != nil {
		return nil, err
	}
	cmd := []string{bin}
	if appendG {
		cmd = append(cmd, "-a")
	}
	cmd = append(cmd, "-G", strings.Join(groups, ","), name)
	if r := userRoot(c); r != "" {
		cmd = append(cmd, "-R", r)
	}
	res, err := userRun(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if res.retcode != 0 && strings.Contains(res.stderr, "not found in") {
		ok := true
		for _, g := range groups {
			r, err := userRun(ctx, []string{"gpasswd", "-a", name, g})
			if err != nil || r.retcode != 0 {
				ok = false
			}
		}
		return ok, nil
	}
	return res.retcode == 0, nil
}

// sortedNames turns the entries of a passwd-style file (and the error of
// reading it) into the sorted list of their names, as user.list_users and
// shadow.list_users return it.
func sortedNames[T any](all []T, err error) func(name func(T) string) (any, error) {
	return func(name func(T) string) (any, error) {
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		names := make([]string, 0, len(all))
		for _, e := range all {
			names = append(names, name(e))
		}
		sort.Strings(names)
		return grainsStrList(names), nil
	}
}

// userLoginclass is get_loginclass and chloginclass: login classes exist
// on OpenBSD only, so elsewhere both answer False as Salt's do; gsalt
// does not manage OpenBSD's login classes and says so there.
func userLoginclass(_ context.Context, c *modules.Call) (any, error) {
	var kernel any
	if c.Env != nil && c.Env.Grains != nil {
		kernel, _ = c.Env.Grains.Get("kernel")
	}
	if kernel != "OpenBSD" {
		return false, nil
	}
	return nil, fmt.Errorf("%w: %s: OpenBSD login classes are not managed by gsalt", modules.ErrExecution, c.Fun)
}
