package eauth

import (
	"errors"
	"os/user"
)

// pamAuth is salt.auth.pam: the system's PAM stack for the service
// auth.pam.service ("login" by default); groups are the user's system
// groups. libpam is loaded at run time (dlopen of libpam.so.0), so the
// build needs no PAM headers; builds without cgo refuse every login.
type pamAuth struct{ env Env }

// ErrPAMUnavailable is returned when libpam cannot be used.
var ErrPAMUnavailable = errors.New("eauth: PAM is not available")

func init() { register("pam", func(env Env) (Backend, error) { return pamAuth{env: env}, nil }) }

func (p pamAuth) service() string {
	if v, ok := p.env.Opts("auth.pam.service"); ok {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return "login"
}

func (p pamAuth) Auth(username, password string) (bool, error) {
	return pamAuthenticate(p.service(), username, password)
}

// Groups is salt.utils.user.get_group_list: the user's group names.
func (pamAuth) Groups(username string) ([]string, error) {
	u, err := user.Lookup(username)
	if err != nil {
		return nil, err
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		}
	}
	return out, nil
}
