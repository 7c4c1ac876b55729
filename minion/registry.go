package minion

import (
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	statebuiltin "github.com/gsalt/gsalt/states/builtin"
)

// Extension registers execution and state functions beyond the built-in
// ones (cmd/gsalt-minion adds the virt module from a higher layer).
type Extension func(reg *modules.Registry, st *states.Registry) error

// NewRegistry returns the execution-module registry a gsalt minion runs:
// the built-in modules and the extensions, plus the state system's state.*
// functions over the built-in state modules and the default renderers.
// Many minions (swarm, proxies) may share one.
func NewRegistry(ext ...Extension) (*modules.Registry, error) {
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		return nil, fmt.Errorf("minion: execution modules: %w", err)
	}
	st := states.NewRegistry()
	if err := statebuiltin.Register(st); err != nil {
		return nil, fmt.Errorf("minion: state modules: %w", err)
	}
	for _, e := range ext {
		if err := e(reg, st); err != nil {
			return nil, fmt.Errorf("minion: extension: %w", err)
		}
	}
	if err := states.RegisterExec(reg, st, render.Default()); err != nil {
		return nil, fmt.Errorf("minion: state functions: %w", err)
	}
	return reg, nil
}
