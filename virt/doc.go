// Package virt is Salt Virt on libvirt: the virt.* execution module
// (salt/modules/virt.py), the virt.* state module (salt/states/virt.py),
// the virt.* runner (salt/runners/virt.py) and image seeding
// (salt/modules/seed.py).
//
// Every libvirt call goes through the small Conn/Domain/Network/Pool/Volume
// interfaces of this package, so the XML generation, host choice and seeding
// logic are tested without a daemon. The real implementation
// (libvirt_dlopen.go) is on libvirt.org/go/libvirt built with the
// libvirt_dlopen tag: cgo is needed but no libvirt headers, and
// libvirt.so.0 is opened at run time. A minion without libvirt gets
// ErrNoLibvirt from every virt.* function; a binary built without the tag
// gets ErrNotBuilt.
package virt
