// Package builtin holds gsalt's returners, one file each (Salt's
// salt/returners/<name>.py): Register adds them all to a registry.
package builtin

import (
	"errors"

	"github.com/gsalt/gsalt/returners"
)

// Register adds every built-in returner to r.
func Register(r *returners.Registry) error {
	return errors.Join(
		r.Register("pgjsonb", func(env returners.Env) (returners.Returner, error) { return NewPgjsonb(env), nil }),
	)
}

// New returns a registry holding the built-in returners.
func New() *returners.Registry {
	r := returners.NewRegistry()
	if err := Register(r); err != nil {
		panic(err) // a programming error: names are fixed
	}
	return r
}
