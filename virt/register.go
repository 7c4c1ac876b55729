package virt

import (
	"errors"
	"slices"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
)

// Functions returns every virt.* execution function of the module.
func (m *Module) Functions() []modules.Function {
	return slices.Concat(m.domainFunctions(), m.hostFunctions(), m.networkFunctions(), m.poolFunctions(), m.initFunctions(), m.defineFunctions(), m.capsFunctions(), m.netDefineFunctions(), m.updateFunctions())
}

// Extension registers the virt.* execution functions on the real libvirt
// (a minion.Extension: cmd/gsalt-minion and cmd/gsalt-call add it).
func Extension(reg *modules.Registry, st *states.Registry) error {
	errs := []error{reg.Register(Functions()...), reg.Register(SeedFunctions()...)}
	if st != nil {
		errs = append(errs, st.Register(StateFunctions()...))
	}
	return errors.Join(errs...)
}

// SeedFunctions returns the seed.* execution functions (Salt's seed
// module) on the host's tools.
func SeedFunctions() []modules.Function { return seedFunctions(&Seeder{}) }
