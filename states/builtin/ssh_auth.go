package builtin

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's ssh_auth state module (salt/states/ssh_auth.py):
// authorized keys through the ssh execution module.

func sshAuthStates() []states.Function {
	params := []modules.Param{sbReq("name"), sbReq("user"), sbOpt("enc", "ssh-rsa"), sbOpt("comment", ""), sbOpt("source", ""),
		sbOpt("options", nil), sbOpt("config", ".ssh/authorized_keys"), sbOpt("fingerprint_hash_type", nil)}
	return []states.Function{
		{Name: "ssh_auth.present", Spec: modules.Spec{Params: params, Kwargs: true}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return sshAuthPresent(ctx, c, newSSHAuthArgs(c, sbName(c)))
		}},
		{Name: "ssh_auth.absent", Spec: modules.Spec{Params: params}, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return sshAuthAbsent(ctx, c, newSSHAuthArgs(c, sbName(c)))
		}},
		{Name: "ssh_auth.manage", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbReq("ssh_keys")}, params[1:]...), Kwargs: true}, Fn: sshAuthManage},
	}
}

// sshAuthArgs are the arguments of one key.
type sshAuthArgs struct {
	name, user, enc, source, config string
	comment, options, fht           any
}

func newSSHAuthArgs(c *states.Call, name string) sshAuthArgs {
	return sshAuthArgs{name: name, user: c.Args.Str("user"), enc: c.Args.Str("enc"), comment: c.Args.Get("comment"), source: c.Args.Str("source"),
		options: c.Args.Get("options"), config: c.Args.Str("config"), fht: c.Args.Get("fingerprint_hash_type")}
}

var sshAuthFullRe = regexp.MustCompile(`^(.*?)\s?((?:sk-)?(?:ssh\-|ecds)[\w-]+\s.+)$`)

// parse splits "{options} {enc} {key} {comment}" or "{key} [comment]"
// into the arguments; maxSplit is split(None, 2) (present) or split()
// (absent and the test functions: a comment of several words is dropped).
func (a *sshAuthArgs) parse(maxSplit bool) {
	m := sshAuthFullRe.FindStringSubmatch(a.name)
	if m == nil {
		var kc []string
		if maxSplit {
			kc = pySplitN(a.name, 2)
		} else {
			kc = strings.Fields(a.name)
		}
		if len(kc) > 0 {
			a.name = kc[0]
		}
		if len(kc) == 2 {
			a.comment = kc[1]
		}
		return
	}
	if m[1] != "" {
		var opts []any
		for _, o := range strings.Split(m[1], ",") {
			opts = append(opts, o)
		}
		a.options = opts
	}
	var comps []string
	if maxSplit {
		comps = pySplitN(m[2], 3)
	} else {
		comps = strings.Fields(m[2])
	}
	a.enc, a.name = comps[0], comps[1]
	if len(comps) == 3 {
		a.comment = comps[2]
	}
}

// pySplitN is Python's s.split(None, n-1): at most n fields, the last
// keeping its inner whitespace.
func pySplitN(s string, n int) []string {
	var out []string
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	for len(out) < n-1 && s != "" {
		i := strings.IndexAny(s, " \t\n\r\v\f")
		if i < 0 {
			break
		}
		out = append(out, s[:i])
		s = strings.TrimLeft(s[i:], " \t\n\r\v\f")
	}
	if s != "" {
		out = append(out, strings.TrimRight(s, " \t\n\r\v\f"))
	}
	return out
}

func (a sshAuthArgs) optionList() any {
	if a.options == nil {
		return []any{}
	}
	return a.options
}

// checkTest is _present_test / _absent_test.
func sshAuthTest(ctx context.Context, c *states.Call, a sshAuthArgs, present bool) (states.Result, string, error) {
	if a.source != "" {
		keys, err := sbExec(ctx, c, "ssh.check_key_file", []any{a.user, a.source, a.config}, payload.NewMap("saltenv", c.Saltenv, "fingerprint_hash_type", a.fht))
		if err != nil {
			return states.False, "", err
		}
		if km, ok := keys.(*payload.Map); ok && km.Len() > 0 {
			comment := ""
			for _, it := range km.Items() {
				st := payload.Text(it.Value)
				if present && st != "exists" {
					comment += fmt.Sprintf("Set to %s: %s\n", st, payload.KeyString(it.Key))
				}
				if !present && st != "add" {
					comment += fmt.Sprintf("Set to remove: %s\n", payload.KeyString(it.Key))
				}
			}
			if comment != "" {
				return states.None, comment, nil
			}
		}
		if present {
			return states.True, fmt.Sprintf("All host keys in file %s are already present", a.source), nil
		}
		return states.True, fmt.Sprintf("All host keys in file %s are already absent", a.source), nil
	}
	a.parse(false)
	check, err := sbExec(ctx, c, "ssh.check_key", []any{a.user, a.name, a.enc, a.comment, a.optionList()}, payload.NewMap("config", a.config, "fingerprint_hash_type", a.fht))
	if err != nil {
		return states.False, "", err
	}
	if present {
		switch check {
		case "update":
			return states.None, fmt.Sprintf("Key %s for user %s is set to be updated", a.name, a.user), nil
		case "add":
			return states.None, fmt.Sprintf("Key %s for user %s is set to be added", a.name, a.user), nil
		case "exists":
			return states.True, fmt.Sprintf("The authorized host key %s is already present for user %s", a.name, a.user), nil
		}
		return states.None, pyfmt.Str(a.comment), nil
	}
	if check == "update" || check == "exists" {
		return states.None, fmt.Sprintf("Key %s for user %s is set for removal", a.name, a.user), nil
	}
	return states.True, "Key is already absent", nil
}

var sshAuthKeyLineRe = regexp.MustCompile(`^(sk-)?(ssh\-|ecds).*`)

func sshAuthPresent(ctx context.Context, c *states.Call, a sshAuthArgs) (states.Ret, error) {
	ret := states.Ret{Name: a.name, Result: states.True, Changes: &payload.Map{}}
	if a.source == "" {
		a.parse(true)
	}
	if c.Test {
		r, comment, err := sshAuthTest(ctx, c, a, true)
		ret.Result, ret.Comment = r, comment
		return ret, err
	}
	kw := payload.NewMap("config", a.config, "fingerprint_hash_type", a.fht)
	var data any
	if a.source != "" {
		path, err := sbExec(ctx, c, "cp.get_url", []any{a.source, nil}, payload.NewMap("saltenv", c.Saltenv))
		if err != nil {
			return ret, err
		}
		if !payload.Truthy(path) {
			data = "no key"
		} else {
			key, err := sbExec(ctx, c, "cp.get_file_str", []any{a.source}, payload.NewMap("saltenv", c.Saltenv))
			if err != nil {
				return ret, err
			}
			for _, line := range strings.Split(strings.TrimRight(payload.Text(key), " \t\n\r\v\f"), "\n") {
				if !sshAuthKeyLineRe.MatchString(line) {
					data, err = sbExec(ctx, c, "ssh.set_auth_key_from_file", []any{a.user, a.source},
						payload.NewMap("config", a.config, "saltenv", c.Saltenv, "fingerprint_hash_type", a.fht))
				} else {
					f := strings.Split(line, " ")
					comment := ""
					if len(f) > 2 {
						comment = f[2]
					}
					if len(f) < 2 {
						return ret, fmt.Errorf("IndexError: list index out of range")
					}
					k := kw.Clone()
					k.Set("enc", f[0])
					k.Set("comment", comment)
					k.Set("options", a.optionList())
					data, err = sbExec(ctx, c, "ssh.set_auth_key", []any{a.user, f[1]}, k)
				}
				if err != nil {
					return ret, err
				}
			}
		}
	} else {
		k := kw.Clone()
		k.Set("enc", a.enc)
		k.Set("comment", a.comment)
		k.Set("options", a.optionList())
		var err error
		data, err = sbExec(ctx, c, "ssh.set_auth_key", []any{a.user, a.name}, k)
		if err != nil {
			return ret, err
		}
	}
	switch data {
	case "replace":
		ret.Changes.Set(a.name, "Updated")
		ret.Comment = fmt.Sprintf("The authorized host key %s for user %s was updated", a.name, a.user)
	case "no change":
		ret.Comment = fmt.Sprintf("The authorized host key %s is already present for user %s", a.name, a.user)
	case "new":
		ret.Changes.Set(a.name, "New")
		ret.Comment = fmt.Sprintf("The authorized host key %s for user %s was added", a.name, a.user)
	case "no key":
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to add the ssh key. Source file %s is missing", a.source)
	case "fail":
		ret.Result = states.False
		ret.Comment = "Failed to add the ssh key. Is the home directory available, and/or does the key file exist?"
	case "invalid", "Invalid public key":
		ret.Result = states.False
		ret.Comment = "Invalid public ssh key, most likely has spaces or invalid syntax"
	}
	return ret, nil
}

func sshAuthAbsent(ctx context.Context, c *states.Call, a sshAuthArgs) (states.Ret, error) {
	ret := states.Ret{Name: a.name, Result: states.True, Changes: &payload.Map{}}
	if c.Test {
		r, comment, err := sshAuthTest(ctx, c, a, false)
		ret.Result, ret.Comment = r, comment
		return ret, err
	}
	var comment any
	if a.source != "" {
		key, err := sbExec(ctx, c, "cp.get_file_str", []any{a.source}, payload.NewMap("saltenv", c.Saltenv))
		if err != nil {
			return ret, err
		}
		for _, line := range strings.Split(strings.TrimRight(payload.Text(key), " \t\n\r\v\f"), "\n") {
			if !sshAuthKeyLineRe.MatchString(line) {
				comment, err = sbExec(ctx, c, "ssh.rm_auth_key_from_file", []any{a.user, a.source, a.config},
					payload.NewMap("saltenv", c.Saltenv, "fingerprint_hash_type", a.fht))
			} else {
				f := strings.Split(line, " ")
				if len(f) < 2 {
					return ret, fmt.Errorf("IndexError: list index out of range")
				}
				comment, err = sbExec(ctx, c, "ssh.rm_auth_key", []any{a.user, f[1]}, payload.NewMap("config", a.config, "fingerprint_hash_type", a.fht))
			}
			if err != nil {
				return ret, err
			}
		}
	} else {
		a.parse(true)
		var err error
		comment, err = sbExec(ctx, c, "ssh.rm_auth_key", []any{a.user, a.name}, payload.NewMap("config", a.config, "fingerprint_hash_type", a.fht))
		if err != nil {
			return ret, err
		}
	}
	ret.Comment = payload.Text(comment)
	switch ret.Comment {
	case "User authorized keys file not present":
		ret.Result = states.False
	case "Key removed":
		ret.Changes.Set(a.name, "Removed")
	}
	return ret, nil
}

func sshAuthManage(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := states.Ret{Name: "", Result: states.True, Changes: &payload.Map{}}
	keys, _ := c.Args.Get("ssh_keys").([]any)
	var potential []string
	for _, k := range keys {
		potential = append(potential, strings.Split(pyfmt.Str(k), " ")...)
	}
	existing, err := sbExec(ctx, c, "ssh.auth_keys", nil, payload.NewMap("user", c.Args.Get("user")))
	if err != nil {
		return ret, err
	}
	var remove []string
	if em, ok := existing.(*payload.Map); ok {
		for _, k := range em.Keys() {
			found := false
			for _, p := range potential {
				found = found || p == k
			}
			if !found {
				remove = append(remove, k)
			}
		}
	}
	sort.Strings(remove)
	for _, k := range remove {
		if c.Test {
			ret.Comment = k + " Key set for removal"
			ret.Result = states.None
			continue
		}
		a := newSSHAuthArgs(c, k)
		a.enc, a.comment, a.source, a.options, a.config, a.fht = "ssh-rsa", "", "", nil, ".ssh/authorized_keys", nil
		r, err := sshAuthAbsent(ctx, c, a)
		if err != nil {
			return ret, err
		}
		ret.Changes.Set(k, r.Comment)
	}
	for _, k := range keys {
		r, err := sshAuthPresent(ctx, c, newSSHAuthArgs(c, pyfmt.Str(k)))
		if err != nil {
			return ret, err
		}
		if r.Changes != nil && r.Changes.Len() > 0 {
			for _, it := range r.Changes.Items() {
				ret.Changes.SetKey(it.Key, it.Value)
			}
		} else {
			ret.Comment = strings.TrimSpace(ret.Comment + "\n" + r.Comment)
		}
		switch r.Result {
		case states.None:
			ret.Result = states.None
		case states.False:
			ret.Result = states.False
		}
	}
	return ret, nil
}
