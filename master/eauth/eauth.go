package eauth

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Options configure an Auth; the fields are the master options of the
// same names.
type Options struct {
	// Opts reads any master option (external_auth, sharedsecret,
	// token_expire, token_expire_user_override, keep_acl_in_token,
	// permissive_acl, publisher_acl, ...). Required.
	Opts func(key string) (any, bool)
	// TokenDir is token_dir (cachedir/tokens).
	TokenDir string
	// Logger receives the refusals; nil means slog.Default().
	Logger *slog.Logger
	// MinFailDelay is the initial failure delay of time_auth (Salt's
	// max_fail, 1s); tests may lower it. Zero means one second.
	MinFailDelay time.Duration
}

// Error is Salt's {"name": ..., "message": ...} error of an auth failure.
type Error struct{ Name, Message string }

// Map renders e as Salt's error dict.
func (e *Error) Map() *payload.Map { return payload.NewMap("name", e.Name, "message", e.Message) }

// Result is LoadAuth.check_authentication's answer.
type Result struct {
	AuthList []any
	// Username is the authenticated user (the token's name for tokens).
	Username string
	// Err is set when authentication failed.
	Err *Error
}

// Auth is salt.auth.LoadAuth for the master: it authenticates eauth
// credentials and tokens and compiles the user's ACL. Safe for concurrent
// use.
type Auth struct {
	opts   func(string) (any, bool)
	tokens *Tokens
	log    *slog.Logger

	mu      sync.Mutex
	maxFail time.Duration
}

// New builds an Auth.
func New(o Options) *Auth {
	a := &Auth{opts: o.Opts, tokens: &Tokens{Dir: o.TokenDir}, log: o.Logger, maxFail: o.MinFailDelay}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.maxFail == 0 {
		a.maxFail = time.Second
	}
	if a.opts == nil {
		a.opts = func(string) (any, bool) { return nil, false }
	}
	return a
}

// Tokens returns the token store.
func (a *Auth) Tokens() *Tokens { return a.tokens }

func (a *Auth) opt(k string) any { v, _ := a.opts(k); return v }

// enabled reports whether external_auth configures the eauth system name.
func (a *Auth) enabled(name string) bool {
	_, ok := dictGet(a.opt("external_auth"), name)
	return ok
}

func loadStr(load *payload.Map, k string) string {
	v, ok := load.Get(k)
	if !ok {
		return ""
	}
	return PyStr(v)
}

// call runs the backend's auth, with Salt's failure-time equalisation:
// every failure takes about as long as the slowest one seen so far.
func (a *Auth) call(load *payload.Map) bool {
	start := time.Now()
	ok := a.authCall(load)
	if ok {
		return true
	}
	a.mu.Lock()
	if d := time.Since(start); d > a.maxFail {
		a.maxFail = d
	}
	mf := a.maxFail
	a.mu.Unlock()
	dev := mf / 4
	wait := mf - dev + time.Duration(rand.Int64N(int64(2*dev)+1))
	time.Sleep(time.Until(start.Add(wait)))
	return false
}

func (a *Auth) authCall(load *payload.Map) bool {
	name := loadStr(load, "eauth")
	b, err := NewBackend(name, Env{Opts: a.opts})
	if err != nil {
		return false
	}
	ok, err := b.Auth(loadStr(load, "username"), loadStr(load, "password"))
	if err != nil {
		a.log.Debug("Authentication module threw " + err.Error())
		return false
	}
	return ok
}

func (a *Auth) groups(load *payload.Map) []string {
	b, err := NewBackend(loadStr(load, "eauth"), Env{Opts: a.opts})
	if err != nil {
		return nil
	}
	g, err := b.Groups(loadStr(load, "username"))
	if err != nil {
		return nil
	}
	return g
}

// AuthenticateEauth is LoadAuth.authenticate_eauth.
func (a *Auth) AuthenticateEauth(load *payload.Map) bool {
	if !load.Has("eauth") {
		a.log.Warn(`Authentication failure of type "eauth" occurred.`)
		return false
	}
	name := loadStr(load, "eauth")
	if !a.enabled(name) {
		a.log.Warn(`The eauth system "` + name + `" is not enabled`)
		a.log.Warn(`Authentication failure of type "eauth" occurred.`, "user", loadStr(load, "username"))
		return false
	}
	if !a.call(load) {
		a.log.Warn(`Authentication failure of type "eauth" occurred.`, "user", loadStr(load, "username"), "eauth", name)
		return false
	}
	return true
}

// allowCustomExpire is LoadAuth._allow_custom_expire.
func (a *Auth) allowCustomExpire(load *payload.Map) bool {
	ov := a.opt("token_expire_user_override")
	if b, ok := ov.(bool); ok {
		return b
	}
	wl, ok := dictGet(ov, loadStr(load, "eauth"))
	if !ok {
		return false
	}
	user := loadStr(load, "username")
	for _, u := range asList(wl) {
		if s, ok := u.(string); ok && s == user {
			return true
		}
	}
	return false
}

// MkToken is LoadAuth.mk_token: it authenticates load's eauth credentials
// and stores a token {start, expire, name, eauth[, groups], token}. It
// returns nil when authentication fails.
func (a *Auth) MkToken(load *payload.Map) *payload.Map {
	if !a.AuthenticateEauth(load) {
		return nil
	}
	expire, _ := asFloat(a.opt("token_expire"))
	if v, ok := load.Delete("token_expire"); ok && a.allowCustomExpire(load) {
		if f, ok := asFloat(v); ok {
			expire = f
		}
	}
	now := a.tokens.now()
	tdata := payload.NewMap("start", now, "expire", now+expire, "name", loadStr(load, "username"),
		"eauth", loadStr(load, "eauth"))
	if payload.Truthy(a.opt("keep_acl_in_token")) {
		tdata.Set("auth_list", nil)
	}
	if g := a.groups(load); len(g) > 0 {
		tdata.Set("groups", strList(g))
	}
	if _, err := a.tokens.Mk(tdata); err != nil {
		a.log.Warn("Authentication failure: can not write token file", "err", err)
		return nil
	}
	return tdata
}

// GetToken is LoadAuth.get_tok: the token's data, or nil.
func (a *Auth) GetToken(tok string) *payload.Map { return a.tokens.Get(tok) }

// AuthenticateToken is LoadAuth.authenticate_token.
func (a *Auth) AuthenticateToken(tok string) *payload.Map {
	t := a.tokens.Get(tok)
	if t == nil || !a.enabled(loadStr(t, "eauth")) {
		a.log.Warn(`Authentication failure of type "token" occurred.`)
		return nil
	}
	return t
}

// AuthList is LoadAuth.get_auth_list: the user's ACL from the token or
// the eauth load. It returns nil when the eauth system is not enabled.
func (a *Auth) AuthList(load, token *payload.Map) []any {
	if token != nil && payload.Truthy(a.opt("keep_acl_in_token")) {
		if v, ok := token.Get("auth_list"); ok && v != nil {
			return asList(v)
		}
	}
	var eauth, name string
	var groups []string
	if token != nil {
		eauth, name = loadStr(token, "eauth"), loadStr(token, "name")
		for _, g := range token.List("groups") {
			groups = append(groups, PyStr(g))
		}
	} else {
		eauth, name = loadStr(load, "eauth"), loadStr(load, "username")
		groups = a.groups(load)
	}
	provider, ok := dictGet(a.opt("external_auth"), eauth)
	if !ok {
		a.log.Warn("Authorization failure occurred.")
		return nil
	}
	list := FillAuthList(provider, name, groups, payload.Truthy(a.opt("permissive_acl")))
	if list == nil {
		list = []any{}
	}
	return list
}

// Check is LoadAuth.check_authentication for the auth types "token" and
// "eauth" (the key-based "user" type is the master's own).
func (a *Auth) Check(load *payload.Map, authType string) Result {
	username := "UNKNOWN"
	if load.Has("username") {
		username = loadStr(load, "username")
	}
	r := Result{Username: username}
	switch authType {
	case "token":
		t := a.AuthenticateToken(loadStr(load, "token"))
		if t == nil {
			r.Err = &Error{"TokenAuthenticationError", `Authentication failure of type "token" occurred.`}
			return r
		}
		r.Username = loadStr(t, "name")
		r.AuthList = a.AuthList(load, t)
	case "eauth":
		if !a.AuthenticateEauth(load) {
			r.Err = &Error{"EauthAuthenticationError", `Authentication failure of type "eauth" occurred for user ` + username + "."}
			return r
		}
		r.AuthList = a.AuthList(load, nil)
	default:
		r.Err = &Error{"SaltInvocationError", "Authentication type not supported."}
	}
	return r
}

// AuthType is ClearFuncs._prep_auth_info: the auth type of a load
// ("token", "eauth" or "user"), the error name of a refusal and the keys
// to drop from the load once authorized.
func AuthType(load *payload.Map) (authType, errName string, sensitive []string) {
	switch {
	case load != nil && load.Has("token"):
		return "token", "TokenAuthenticationError", []string{"token"}
	case load != nil && load.Has("eauth"):
		return "eauth", "EauthAuthenticationError", []string{"username", "password"}
	}
	return "user", "UserAuthenticationError", nil
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
