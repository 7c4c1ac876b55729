//go:build !libvirt_dlopen

package virt

// Built reports whether this binary carries the libvirt bindings.
const Built = false

// Libvirt returns a Dialer whose every Open fails with ErrNotBuilt: this
// binary was built without the libvirt_dlopen tag.
func Libvirt() Dialer { return noDialer{} }

type noDialer struct{}

func (noDialer) Open(string, *Auth) (Conn, error) { return nil, ErrNotBuilt }
