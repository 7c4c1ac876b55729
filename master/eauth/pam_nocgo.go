//go:build !(linux && cgo)

package eauth

func pamAuthenticate(service, username, password string) (bool, error) {
	return false, ErrPAMUnavailable
}
