package builtin

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's user state module (salt/states/user.py) for Linux:
// user.present over the user (useradd), shadow and group execution
// modules, and user.absent. The Windows, macOS and BSD branches (win_*
// arguments, loginclass) are accepted and ignored as Salt does on Linux.

func userStates() []states.Function {
	return []states.Function{
		{Name: "user.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("uid", nil), sbOpt("gid", nil), sbOpt("usergroup", nil),
			sbOpt("groups", nil), sbOpt("optional_groups", nil), sbOpt("remove_groups", true), sbOpt("home", nil), sbOpt("createhome", true),
			sbOpt("password", nil), sbOpt("hash_password", false), sbOpt("enforce_password", true), sbOpt("empty_password", false),
			sbOpt("shell", nil), sbOpt("unique", true), sbOpt("system", false), sbOpt("fullname", nil), sbOpt("roomnumber", nil),
			sbOpt("workphone", nil), sbOpt("homephone", nil), sbOpt("other", nil), sbOpt("loginclass", nil), sbOpt("date", nil),
			sbOpt("mindays", nil), sbOpt("maxdays", nil), sbOpt("inactdays", nil), sbOpt("warndays", nil), sbOpt("expire", nil),
			sbOpt("win_homedrive", nil), sbOpt("win_profile", nil), sbOpt("win_logonscript", nil), sbOpt("win_description", nil),
			sbOpt("nologinit", false), sbOpt("allow_uid_change", false), sbOpt("allow_gid_change", false), sbOpt("password_lock", nil)}},
			Fn: userPresent},
		{Name: "user.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("purge", false), sbOpt("force", false)}}, Fn: userAbsent},
	}
}

func userAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	info, err := sbExec(ctx, c, "user.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if m, ok := info.(*payload.Map); !ok || m.Len() == 0 {
		ret.Comment = fmt.Sprintf("User %s is not present", name)
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("User %s set for removal", name)
		return ret, nil
	}
	before, err := sbExec(ctx, c, "user.list_groups", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	ok, err := sbExec(ctx, c, "user.delete", []any{name, c.Args.Get("purge"), c.Args.Get("force")}, nil)
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(ok) {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to remove user %s", name)
		return ret, nil
	}
	var gone []string
	for _, g := range anyList(before) {
		gi, err := sbExec(ctx, c, "group.info", []any{g}, nil)
		if err != nil {
			return ret, err
		}
		if !payload.Truthy(gi) {
			gone = append(gone, payload.Text(g))
		}
	}
	// Salt iterates a set here; sorted is one of its orders.
	sort.Strings(gone)
	for _, g := range gone {
		ret.Changes.Set(g+" group", "removed")
	}
	ret.Changes.Set(name, "removed")
	ret.Comment = fmt.Sprintf("Removed user %s", name)
	return ret, nil
}

// userRedacted replaces password hashes in returns.
const userRedacted = "XXX-REDACTED-XXX"

// userWant is what user.present asks for, after its argument handling.
type userWant struct {
	uid, gid                            any
	groups                              []any // nil: not given
	optGroups                           []any // present optional groups, nil: none given
	removeGroups                        bool
	home                                any
	createhome                          bool
	password                            any
	enforcePassword, emptyPassword      bool
	shell                               any
	gecos                               [5]any // fullname, roomnumber, workphone, homephone, other
	date, mindays, maxdays, inact, warn any
	expire                              any
	allowUID, allowGID                  bool
	passwordLock                        any
}

var userGecosKeys = [5]string{"fullname", "roomnumber", "workphone", "homephone", "other"}

// pyListRemove is list.remove(v) when v is in l.
func pyListRemove(l []any, v any) []any {
	for i, x := range l {
		if pyfmt.Equal(x, v) {
			return slices.Delete(slices.Clone(l), i, i+1)
		}
	}
	return l
}

// pySortedSet is sorted(set(l)) on strings (group names).
func pySortedSet(l []any) []any {
	seen := map[string]bool{}
	var names []string
	for _, x := range l {
		s := pyfmt.Str(x)
		if !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	slices.Sort(names)
	return toAnyStrs(names)
}

// userGroupChanges is user._group_changes.
func userGroupChanges(cur, wanted []any, remove bool) bool {
	subset := func(a, b []any) bool { // every element of a is in b
		for _, x := range a {
			if !containsPy(b, x) {
				return false
			}
		}
		return true
	}
	if remove {
		return !(subset(cur, wanted) && subset(wanted, cur))
	}
	return !subset(wanted, cur)
}

// errUserChanges is _changes' CommandExecutionError: its text is the
// state's comment.
type errUserChanges struct{ msg string }

func (e *errUserChanges) Error() string { return e.msg }

// userChanges is user._changes: nil when the user does not exist, else
// the changes still needed, in Salt's order.
func userChanges(ctx context.Context, c *states.Call, name string, w userWant, gid any) (*payload.Map, error) {
	lshadV, err := sbExec(ctx, c, "shadow.info", []any{name}, nil)
	if err != nil {
		return nil, err
	}
	lshad, _ := lshadV.(*payload.Map)
	if lshad == nil {
		lshad = &payload.Map{}
	}
	lusrV, err := sbExec(ctx, c, "user.info", []any{name}, nil)
	if err != nil {
		return nil, err
	}
	lusr, _ := lusrV.(*payload.Map)
	if lusr == nil || lusr.Len() == 0 {
		return nil, nil
	}
	change := &payload.Map{}
	curGroups := slices.Clone(lusr.List("groups"))
	wanted := pySortedSet(append(slices.Clone(w.groups), w.optGroups...))
	if !w.removeGroups || (w.groups == nil && len(w.optGroups) == 0) {
		wanted = pySortedSet(append(wanted, curGroups...))
	}
	luid, _ := lusr.Get("uid")
	lgid, _ := lusr.Get("gid")
	if payload.Truthy(w.uid) && !pyfmt.Equal(luid, w.uid) {
		change.Set("uid", w.uid)
	}
	if gid != nil {
		g2, err := sbExec(ctx, c, "file.group_to_gid", []any{gid}, nil)
		if err != nil {
			return nil, err
		}
		if !pyfmt.Equal(lgid, gid) && !pyfmt.Equal(lgid, g2) {
			change.Set("gid", gid)
		}
	}
	dg := lgid
	if gid != nil {
		dg = gid
	}
	defaultGrp, err := sbExec(ctx, c, "file.gid_to_group", []any{dg}, nil)
	if err != nil {
		return nil, err
	}
	oldDefaultGrp, err := sbExec(ctx, c, "file.gid_to_group", []any{lgid}, nil)
	if err != nil {
		return nil, err
	}
	curGroups = pyListRemove(curGroups, defaultGrp)
	if !pyfmt.Equal(oldDefaultGrp, defaultGrp) {
		curGroups = pyListRemove(curGroups, oldDefaultGrp)
	}
	if containsPy(curGroups, name) && !containsPy(wanted, name) {
		curGroups = pyListRemove(curGroups, name)
	}
	wanted = pyListRemove(wanted, defaultGrp)
	if userGroupChanges(curGroups, wanted, w.removeGroups) {
		change.Set("groups", wanted)
	}
	lhome, _ := lusr.Get("home")
	if payload.Truthy(w.home) && !pyfmt.Equal(lhome, w.home) {
		change.Set("home", w.home)
	}
	if w.createhome {
		newhome := lhome
		if payload.Truthy(w.home) {
			newhome = w.home
		}
		if newhome != nil {
			if st, err := os.Stat(pyfmt.Str(newhome)); err != nil || !st.IsDir() {
				change.Set("homeDoesNotExist", newhome)
			}
		}
	}
	lshell, _ := lusr.Get("shell")
	if payload.Truthy(w.shell) && !pyfmt.Equal(lshell, w.shell) {
		change.Set("shell", w.shell)
	}
	spw := lshad.Str("passwd")
	if payload.Truthy(w.password) && !w.emptyPassword {
		if spw == "!" || w.enforcePassword {
			if !pyfmt.Equal(spw, w.password) {
				change.Set("passwd", w.password)
			}
		}
	}
	if w.emptyPassword && spw != "" {
		change.Set("empty_password", true)
	}
	for _, a := range []struct {
		key, shadowKey string
		v              any
	}{{"date", "lstchg", w.date}, {"mindays", "min", w.mindays}, {"maxdays", "max", w.maxdays}, {"inactdays", "inact", w.inact}, {"warndays", "warn", w.warn}} {
		if cur, _ := lshad.Get(a.shadowKey); a.v != nil && !pyfmt.Equal(cur, a.v) {
			change.Set(a.key, a.v)
		}
	}
	if cur, _ := lshad.Get("expire"); payload.Truthy(w.expire) && !pyfmt.Equal(cur, w.expire) {
		change.Set("expire", w.expire)
	}
	locked := strings.HasPrefix(spw, "!")
	if (payload.Truthy(w.passwordLock) && !locked) || (w.passwordLock == false && locked) {
		change.Set("password_lock", w.passwordLock)
	}
	for i, k := range userGecosKeys {
		cur, _ := lusr.Get(k)
		if w.gecos[i] != nil && !pyfmt.Equal(cur, w.gecos[i]) {
			change.Set(k, w.gecos[i])
		}
	}
	var errs []string
	if !w.allowUID && change.Has("uid") {
		errs = append(errs, fmt.Sprintf("Changing uid (%s -> %s) not permitted, set allow_uid_change to True to force this change. Note that this will not change file ownership.", pyfmt.Str(luid), pyfmt.Str(w.uid)))
	}
	if !w.allowGID && change.Has("gid") {
		errs = append(errs, fmt.Sprintf("Changing gid (%s -> %s) not permitted, set allow_gid_change to True to force this change. Note that this will not change file ownership.", pyfmt.Str(lgid), pyfmt.Str(w.gid)))
	}
	if len(errs) > 0 {
		return nil, &errUserChanges{"Encountered error checking for needed changes. Additional info follows:\n\n- " + strings.Join(errs, "\n- ")}
	}
	return change, nil
}

// userStrOrNil is str(v) for a GECOS argument that is not None.
func userStrOrNil(v any) any {
	if v == nil {
		return nil
	}
	return pyfmt.Str(v)
}

func userPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	w := userWant{uid: a.Get("uid"), gid: a.Get("gid"), removeGroups: payload.Truthy(a.Get("remove_groups")), home: a.Get("home"),
		createhome: payload.Truthy(a.Get("createhome")), password: a.Get("password"), enforcePassword: payload.Truthy(a.Get("enforce_password")),
		emptyPassword: payload.Truthy(a.Get("empty_password")), shell: a.Get("shell"), date: a.Get("date"), mindays: a.Get("mindays"),
		maxdays: a.Get("maxdays"), inact: a.Get("inactdays"), warn: a.Get("warndays"), expire: a.Get("expire"),
		allowUID: payload.Truthy(a.Get("allow_uid_change")), allowGID: payload.Truthy(a.Get("allow_gid_change")), passwordLock: a.Get("password_lock")}
	if g := a.Get("groups"); g != nil {
		w.groups = slices.Clone(anyList(g))
	}
	if payload.Truthy(w.password) && payload.Truthy(a.Get("hash_password")) {
		info, err := sbExec(ctx, c, "shadow.info", []any{name}, nil)
		if err != nil {
			return states.Ret{}, err
		}
		var kw *payload.Map
		if m, ok := info.(*payload.Map); ok {
			parts := strings.SplitN(m.Str("passwd"), "$", 5)
			if len(parts) == 4 {
				algo := map[string]any{"1": "md5", "2a": "blowfish", "5": "sha256", "6": "sha512"}[parts[1]]
				kw = payload.NewMap("crypt_salt", parts[2], "algorithm", algo)
			}
		}
		hashed, err := sbExec(ctx, c, "shadow.gen_password", []any{w.password}, kw)
		if err != nil {
			return states.Ret{}, err
		}
		w.password = hashed
	}
	for i, k := range userGecosKeys {
		w.gecos[i] = userStrOrNil(a.Get(k))
	}
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: fmt.Sprintf("User %s is present and up to date", name)}
	for _, f := range w.gecos[:3] {
		if s, ok := f.(string); ok && strings.Contains(s, ",") {
			ret.Comment = fmt.Sprintf("Unsupported char ',' in %s", s)
			ret.Result = states.False
			return ret, nil
		}
	}
	if payload.Truthy(a.Get("groups")) {
		var missing []string
		for _, g := range w.groups {
			info, err := sbExec(ctx, c, "group.info", []any{g}, nil)
			if err != nil {
				return ret, err
			}
			if !payload.Truthy(info) {
				missing = append(missing, pyfmt.Str(g))
			}
		}
		if len(missing) > 0 {
			ret.Comment = "The following group(s) are not present: " + strings.Join(missing, ",")
			ret.Result = states.False
			return ret, nil
		}
	}
	if og := a.Get("optional_groups"); payload.Truthy(og) {
		w.optGroups = []any{}
		for _, g := range anyList(og) {
			info, err := sbExec(ctx, c, "group.info", []any{g}, nil)
			if err != nil {
				return ret, err
			}
			if payload.Truthy(info) {
				w.optGroups = append(w.optGroups, g)
			} else {
				sbLog(c).Debug("optional group for user is not present", "group", g, "user", name)
			}
		}
	}
	changesGID := w.gid
	if payload.Truthy(a.Get("usergroup")) {
		g, err := sbExec(ctx, c, "file.group_to_gid", []any{name}, nil)
		if err != nil {
			return ret, err
		}
		if !pyfmt.Equal(g, "") {
			changesGID = name
		}
	}
	changes, err := userChanges(ctx, c, name, w, changesGID)
	if e, ok := err.(*errUserChanges); ok {
		ret.Result = states.False
		ret.Comment = e.msg
		return ret, nil
	}
	if err != nil {
		return ret, err
	}
	if changes == nil {
		return userCreate(ctx, c, name, w, ret)
	}
	if changes.Len() == 0 {
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = "The following user attributes are set to be changed:\n"
		for _, it := range changes.Items() {
			v := it.Value
			if payload.KeyString(it.Key) == "passwd" {
				v = userRedacted
			}
			ret.Comment += fmt.Sprintf("%s: %s\n", payload.KeyString(it.Key), pyfmt.Str(v))
		}
		return ret, nil
	}
	return userUpdate(ctx, c, name, w, changes, ret)
}

// userUpdate applies changes to an existing user and reports what moved.
func userUpdate(ctx context.Context, c *states.Call, name string, w userWant, changes *payload.Map, ret states.Ret) (states.Ret, error) {
	lshadV, err := sbExec(ctx, c, "shadow.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	preV, err := sbExec(ctx, c, "user.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	lshad, _ := lshadV.(*payload.Map)
	pre, _ := preV.(*payload.Map)
	if lshad == nil || pre == nil {
		return ret, fmt.Errorf("states/builtin: user.info or shadow.info returned no dict")
	}
	exec := func(fun string, args ...any) error {
		_, err := sbExec(ctx, c, fun, args, nil)
		return err
	}
	pop := func(k string) (any, bool) { return changes.Delete(k) }
	if _, ok := pop("passwd"); ok && !w.emptyPassword {
		if err := exec("shadow.set_password", name, w.password); err != nil {
			return ret, err
		}
	}
	if v, ok := pop("empty_password"); ok && v == true {
		if err := exec("shadow.del_password", name); err != nil {
			return ret, err
		}
	}
	if v, ok := pop("password_lock"); ok {
		fun := "shadow.unlock_password"
		if payload.Truthy(v) {
			fun = "shadow.lock_password"
		}
		if err := exec(fun, name); err != nil {
			return ret, err
		}
	}
	if _, ok := pop("date"); ok {
		if err := exec("shadow.set_date", name, w.date); err != nil {
			return ret, err
		}
	}
	chhome := func(v any) error {
		_, err := sbExec(ctx, c, "user.chhome", []any{name, v}, payload.NewMap("persist", false))
		return err
	}
	homeChanged := false
	if v, ok := pop("home"); ok && !changes.Has("homeDoesNotExist") {
		if err := chhome(v); err != nil {
			return ret, err
		}
		homeChanged = true
	}
	if v, ok := pop("homeDoesNotExist"); ok {
		if !homeChanged {
			if err := chhome(v); err != nil {
				return ret, err
			}
		}
		if st, err := os.Stat(pyfmt.Str(v)); err != nil || !st.IsDir() {
			uid, _ := pre.Get("uid")
			gid, _ := pre.Get("gid")
			if err := exec("file.mkdir", v, uid, gid, int64(0o755)); err != nil {
				return ret, err
			}
		}
	}
	for _, s := range []struct{ key, fun string }{{"mindays", "set_mindays"}, {"maxdays", "set_maxdays"}, {"inactdays", "set_inactdays"}, {"warndays", "set_warndays"}, {"expire", "set_expire"}} {
		if v, ok := pop(s.key); ok {
			if err := exec("shadow."+s.fun, name, v); err != nil {
				return ret, err
			}
		}
	}
	for _, k := range changes.Keys() {
		if k == "groups" || c.Env == nil || c.Env.Registry == nil {
			continue
		}
		if _, ok := c.Env.Registry.Lookup("user.ch" + k); !ok {
			continue
		}
		v, _ := pop(k)
		if err := exec("user.ch"+k, name, v); err != nil {
			return ret, err
		}
	}
	if v, ok := pop("groups"); ok {
		if err := exec("user.chgroups", name, v, !w.removeGroups); err != nil {
			return ret, err
		}
	}
	postV, err := sbExec(ctx, c, "user.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	post, _ := postV.(*payload.Map)
	spost := &payload.Map{}
	if cur, _ := lshad.Get("passwd"); !pyfmt.Equal(cur, w.password) {
		v, err := sbExec(ctx, c, "shadow.info", []any{name}, nil)
		if err != nil {
			return ret, err
		}
		if m, ok := v.(*payload.Map); ok {
			spost = m
		}
	}
	if post != nil {
		for _, it := range post.Items() {
			k := payload.KeyString(it.Key)
			if before, _ := pre.Get(k); !pyfmt.Equal(before, it.Value) {
				ret.Changes.Set(k, it.Value)
			}
		}
	}
	for _, it := range spost.Items() {
		k := payload.KeyString(it.Key)
		if before, _ := lshad.Get(k); !pyfmt.Equal(before, it.Value) {
			if k == "passwd" {
				ret.Changes.Set(k, userRedacted)
			} else {
				ret.Changes.Set(k, it.Value)
			}
		}
	}
	if ret.Changes.Len() > 0 {
		ret.Comment = fmt.Sprintf("Updated user %s", name)
	}
	w.allowUID, w.allowGID = true, true
	after, err := userChanges(ctx, c, name, w, w.gid)
	if err != nil {
		return ret, err
	}
	if after != nil && after.Len() > 0 {
		ret.Comment = fmt.Sprintf("These values could not be changed: %s", pyfmt.Repr(after))
		ret.Result = states.False
	}
	return ret, nil
}

// userCreate adds a missing user (present's "changes is False" branch).
func userCreate(ctx context.Context, c *states.Call, name string, w userWant, ret states.Ret) (states.Ret, error) {
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("User %s set to be added", name)
		return ret, nil
	}
	a := c.Args
	groups := a.Get("groups")
	switch {
	case payload.Truthy(groups) && len(w.optGroups) > 0:
		groups = append(slices.Clone(w.groups), w.optGroups...)
	case len(w.optGroups) > 0:
		groups = slices.Clone(w.optGroups)
	}
	params := payload.NewMap("name", name, "uid", w.uid, "gid", w.gid, "groups", groups, "home", w.home, "shell", w.shell,
		"unique", a.Get("unique"), "system", a.Get("system"))
	for i, k := range userGecosKeys {
		params.Set(k, w.gecos[i])
	}
	params.Set("createhome", a.Get("createhome")).Set("nologinit", a.Get("nologinit")).Set("loginclass", a.Get("loginclass")).Set("usergroup", a.Get("usergroup"))
	result, err := sbExec(ctx, c, "user.add", nil, params)
	if err != nil {
		return ret, err
	}
	if result != true {
		if s, ok := result.(string); ok {
			ret.Comment = s
		} else {
			ret.Comment = fmt.Sprintf("Failed to create new user %s", name)
		}
		ret.Result = states.False
		return ret, nil
	}
	ret.Comment = fmt.Sprintf("New user %s created", name)
	info, err := sbExec(ctx, c, "user.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if m, ok := info.(*payload.Map); ok {
		ret.Changes = m
	}
	if !w.createhome {
		ret.Changes.Set("home", "")
	}
	spost := func() (*payload.Map, error) {
		v, err := sbExec(ctx, c, "shadow.info", []any{name}, nil)
		if err != nil {
			return nil, err
		}
		m, _ := v.(*payload.Map)
		if m == nil {
			m = &payload.Map{}
		}
		return m, nil
	}
	if payload.Truthy(w.password) && !w.emptyPassword {
		if _, err := sbExec(ctx, c, "shadow.set_password", []any{name, w.password}, nil); err != nil {
			return ret, err
		}
		sp, err := spost()
		if err != nil {
			return ret, err
		}
		if cur, _ := sp.Get("passwd"); !pyfmt.Equal(cur, w.password) {
			ret.Comment = fmt.Sprintf("User %s created but failed to set password to %s", name, userRedacted)
			ret.Result = states.False
		}
		ret.Changes.Set("password", userRedacted)
	}
	if w.emptyPassword && !payload.Truthy(w.password) {
		if _, err := sbExec(ctx, c, "shadow.del_password", []any{name}, nil); err != nil {
			return ret, err
		}
		sp, err := spost()
		if err != nil {
			return ret, err
		}
		if sp.Str("passwd") != "" {
			ret.Comment = fmt.Sprintf("User %s created but failed to empty password", name)
			ret.Result = states.False
		}
		ret.Changes.Set("password", "")
	}
	for _, s := range []struct {
		key, fun, field, what string
		v                     any
		always                bool
	}{
		{"date", "set_date", "lstchg", "last change date to", w.date, true},
		{"mindays", "set_mindays", "min", "minimum days to", w.mindays, false},
		{"maxdays", "set_maxdays", "max", "maximum days to", w.maxdays, false},
		{"inactdays", "set_inactdays", "inact", "inactive days to", w.inact, false},
		{"warndays", "set_warndays", "warn", "warn days to", w.warn, false},
		{"expire", "set_expire", "expire", "expire days to", w.expire, false},
	} {
		if (s.always && s.v == nil) || (!s.always && !payload.Truthy(s.v)) {
			continue
		}
		if _, err := sbExec(ctx, c, "shadow."+s.fun, []any{name, s.v}, nil); err != nil {
			return ret, err
		}
		sp, err := spost()
		if err != nil {
			return ret, err
		}
		if cur, _ := sp.Get(s.field); !pyfmt.Equal(cur, s.v) {
			ret.Comment = fmt.Sprintf("User %s created but failed to set %s %s", name, s.what, pyfmt.Str(s.v))
			ret.Result = states.False
		}
		ret.Changes.Set(s.key, s.v)
	}
	return ret, nil
}
