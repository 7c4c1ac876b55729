package virt

import (
	"slices"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
)

// Functions returns every virt.* execution function of the module.
func (m *Module) Functions() []modules.Function {
	return slices.Concat(m.domainFunctions(), m.hostFunctions(), m.networkFunctions(), m.poolFunctions(), m.initFunctions())
}

// Extension registers the virt.* execution functions on the real libvirt
// (a minion.Extension: cmd/gsalt-minion and cmd/gsalt-call add it).
func Extension(reg *modules.Registry, _ *states.Registry) error {
	return reg.Register(Functions()...)
}
