package eauth

import "crypto/subtle"

// sharedSecret is salt.auth.sharedsecret: the password must equal the
// master's sharedsecret option (any user name).
type sharedSecret struct{ env Env }

func init() {
	register("sharedsecret", func(env Env) (Backend, error) { return sharedSecret{env: env}, nil })
}

func (s sharedSecret) Auth(_, password string) (bool, error) {
	v, ok := s.env.Opts("sharedsecret")
	secret, isStr := v.(string)
	if !ok || !isStr {
		return false, nil
	}
	return subtle.ConstantTimeCompare([]byte(secret), []byte(password)) == 1, nil
}

func (sharedSecret) Groups(string) ([]string, error) { return nil, nil }
