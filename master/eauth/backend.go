// Package eauth is Salt's external authentication for the master
// (salt.auth, salt.auth.{auto,sharedsecret,file,pam}, salt.tokens.localfs
// and the ACL half of salt.utils.minions.CkMinions): backends that check a
// user name and password, the ACL language of external_auth and
// publisher_acl, and the token store under the master cachedir. The master
// (package master) calls Auth.CheckAuthentication from its clear publish,
// runner and wheel commands and Auth.MkToken/GetToken for mk_token and
// get_token; gsalt-api goes through those same commands.
package eauth

import (
	"errors"
	"fmt"
	"sort"
)

// Backend checks credentials for one external_auth system.
type Backend interface {
	// Auth reports whether username/password are valid. Errors are
	// treated as a refusal (and logged at debug level, as Salt does).
	Auth(username, password string) (bool, error)
	// Groups returns the user's groups for "name%" ACL entries; backends
	// without groups return nil.
	Groups(username string) ([]string, error)
}

// ErrNoBackend is returned for an eauth name without a backend.
var ErrNoBackend = errors.New("eauth: no such external authentication system")

// Env is what backends may read from the master configuration.
type Env struct {
	// Opts returns a master option (sharedsecret, external_auth, ...).
	Opts func(key string) (any, bool)
}

// factory builds a backend from the master options.
type factory func(env Env) (Backend, error)

// registry maps an eauth name to its constructor; one file per backend
// adds itself in init (read-only afterwards).
var registry = map[string]factory{}

func register(name string, f factory) { registry[name] = f }

// Names lists the available eauth systems, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NewBackend builds the named backend.
func NewBackend(name string, env Env) (Backend, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoBackend, name)
	}
	return f(env)
}
