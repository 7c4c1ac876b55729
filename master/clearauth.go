package master

import (
	"crypto/subtle"
	"strings"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/eauth"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file joins Salt's external auth (package eauth) to the clear
// commands: mk_token, get_token, and the token/eauth/publisher_acl checks
// of publish, runner and wheel (ClearFuncs in salt/master.py).

// clearMkToken answers mk_token: the token data, or "" on failure.
func (m *Master) clearMkToken(load *payload.Map) any {
	td := m.eauth.MkToken(load)
	if td == nil {
		m.log.Warn(`Authentication failure of type "eauth" occurred.`, "user", load.Str("username"), "cmd", "mk_token")
		return ""
	}
	return td
}

// clearGetToken answers get_token: the token's data, {} for an invalid
// token, false without a token.
func (m *Master) clearGetToken(load *payload.Map) any {
	v, ok := load.Get("token")
	if !ok {
		return false
	}
	td := m.eauth.GetToken(payload.Text(v))
	if td == nil {
		return payload.NewMap()
	}
	return td
}

// keyOwner returns the user whose client key key is ("" when none).
func (m *Master) keyOwner(keyV any) string {
	key := []byte(payload.Text(keyV))
	if keyV == nil || len(key) == 0 {
		return ""
	}
	owner := ""
	for u, k := range m.clientKeys {
		if subtle.ConstantTimeCompare(key, []byte(k)) == 1 && (owner == "" || u < owner) {
			owner = u
		}
	}
	return owner
}

// privileged reports whether a client key of user u grants everything
// (root, the master's user or the user the master process runs as).
func (m *Master) privileged(u string) bool {
	return u == "root" || u == m.cfg.User || u == m.processUser()
}

// userACL is the "user" half of LoadAuth.check_authentication: the key
// must be a client key; a key of a user other than root/the master's user
// gets the publisher_acl entries matching that user (nil means
// unrestricted). ok is false on a refusal.
func (m *Master) userACL(keyV any) (authList []any, owner string, ok bool) {
	owner = m.keyOwner(keyV)
	if owner == "" {
		return nil, "", false
	}
	if m.privileged(owner) {
		return nil, owner, true
	}
	pacl, _ := m.cfg.Opts.Get("publisher_acl")
	l := eauth.ValuesOfMatchingKeys(pacl, owner)
	if len(l) == 0 {
		return nil, owner, false
	}
	return l, owner, true
}

// targetCheck is validate_tgt for the ACL: every targeted minion is
// matched by the ACL's compound expression.
func (m *Master) targetCheck(minions []string) eauth.TargetCheck {
	return func(valid string) bool {
		v, _, err := m.checkMinions(valid, target.TypeCompound, target.DefaultDelimiter, true)
		if err != nil {
			return false
		}
		set := make(map[string]bool, len(v))
		for _, id := range v {
			set[id] = true
		}
		for _, id := range minions {
			if !set[id] {
				return false
			}
		}
		return true
	}
}

// funsArgs splits a load's fun and arg into Salt's auth_check shape.
func funsArgs(load *payload.Map) ([]string, [][]any) {
	funV, _ := load.Get("fun")
	args := load.List("arg")
	if l, ok := funV.([]any); ok {
		funs := make([]string, len(l))
		per := make([][]any, len(l))
		for i, f := range l {
			funs[i] = payload.Text(f)
			if i < len(args) {
				per[i], _ = args[i].([]any)
			}
		}
		return funs, per
	}
	return []string{payload.Text(funV)}, [][]any{args}
}

// publishAuth runs ClearFuncs.publish's checks on a clear publish load
// (key already removed into keyV). It returns the error reply, or nil when
// the publish may go on; on success load's user is the authenticated one
// and credentials are dropped from its kwargs.
func (m *Master) publishAuth(load *payload.Map, keyV any) *payload.Map {
	funs, args := funsArgs(load)
	bl, _ := m.cfg.Opts.Get("publisher_acl_blacklist")
	if eauth.Blacklisted(bl, load.Str("user"), funs) {
		m.log.Error(load.Str("user")+" does not have permissions to run "+strings.Join(funs, ",")+". Please contact your local administrator if you believe this is in error.",
			"user", load.Str("user"), "fun", strings.Join(funs, ","))
		return payload.NewMap("error", payload.NewMap("name", "AuthorizationError", "message", "Authorization error occurred."))
	}
	kwargs := load.Map("kwargs")
	authType, _, sensitive := eauth.AuthType(kwargs)
	var authList []any
	var user string
	authErr := false
	if authType == "user" {
		var ok bool
		authList, user, ok = m.userACL(keyV)
		authErr = !ok
	} else {
		r := m.eauth.Check(kwargs, authType)
		authErr = r.Err != nil
		authList, user = r.AuthList, r.Username
	}
	jobErr := func(e *payload.Map) *payload.Map {
		if load.Has("jid") {
			ev := load.Clone()
			if kw := ev.Map("kwargs"); kw != nil {
				kw = kw.Clone()
				for _, k := range []string{"password", "token"} {
					kw.Delete(k)
				}
				ev.Set("kwargs", kw)
			}
			ev.Set("error", e)
			m.fire(event.Tagify([]string{load.Str("jid"), "error"}, "job"), ev)
		}
		return payload.NewMap("error", e)
	}
	if authErr {
		m.log.Warn(`Authentication failure of type "`+authType+`" occurred.`, "user", user, "fun", strings.Join(funs, ","))
		return jobErr(payload.NewMap("name", "AuthenticationError", "message", "Authentication error occurred."))
	}
	if authType != "user" || authList != nil {
		tgt, _ := load.Get("tgt")
		tgtType := load.Str("tgt_type")
		if tgtType == "" {
			tgtType = target.TypeGlob
		}
		delim := target.DefaultDelimiter
		if kwargs != nil && kwargs.Str("delimiter") != "" {
			delim = kwargs.Str("delimiter")
		}
		minions, _, _ := m.checkMinions(tgt, tgtType, delim, true)
		if !eauth.AuthCheck(authList, funs, args, m.targetCheck(minions), []string{"saltutil.find_job"}) {
			m.log.Warn(`Authentication failure of type "`+authType+`" occurred.`, "user", user, "fun", strings.Join(funs, ","), "tgt", payload.Text(tgt))
			return jobErr(payload.NewMap("name", "AuthorizationError", "message", "Authorization error occurred."))
		}
		if authType != "user" {
			load.Set("user", user)
			kw := kwargs.Clone()
			for _, k := range sensitive {
				if k != "username" {
					kw.Delete(k)
				}
			}
			kw.Delete("token")
			load.Set("kwargs", kw)
		}
	}
	return nil
}

// specAuth runs the token/eauth checks of ClearFuncs.runner and wheel:
// authentication, then spec_check of form ("runner" or "wheel") over the
// load's fun and kwarg. It returns the error reply or nil, and the
// authenticated user. Credentials are removed from load on success.
func (m *Master) specAuth(load *payload.Map, form string) (*payload.Map, string) {
	authType, errName, sensitive := eauth.AuthType(load)
	r := m.eauth.Check(load, authType)
	if r.Err != nil {
		m.log.Warn(r.Err.Message, "user", r.Username, "fun", load.Str("fun"), "client", form)
		return payload.NewMap("error", r.Err.Map()), ""
	}
	low, _ := load.Get("kwarg")
	if low == nil {
		low = payload.NewMap()
	}
	ok, err := eauth.SpecCheck(r.AuthList, load.Str("fun"), low, form)
	if err != nil {
		return payload.NewMap("error", payload.NewMap("name", "SaltInvocationError", "message", err.Error())), ""
	}
	if !ok {
		msg := `Authentication failure of type "` + authType + `" occurred for user ` + r.Username + "."
		m.log.Warn(msg, "user", r.Username, "fun", load.Str("fun"), "client", form)
		return payload.NewMap("error", payload.NewMap("name", errName, "message", msg)), ""
	}
	for _, k := range sensitive {
		load.Delete(k)
	}
	return nil, r.Username
}
