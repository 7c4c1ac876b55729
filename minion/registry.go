package minion

import (
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	statebuiltin "github.com/gsalt/gsalt/states/builtin"
)

// NewRegistry returns the execution-module registry a gsalt minion runs:
// the built-in modules plus the state system's state.* functions over the
// built-in state modules and the default renderers. Many minions (swarm,
// proxies) may share one.
func NewRegistry() (*modules.Registry, error) {
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		return nil, fmt.Errorf("minion: execution modules: %w", err)
	}
	st := states.NewRegistry()
	if err := statebuiltin.Register(st); err != nil {
		return nil, fmt.Errorf("minion: state modules: %w", err)
	}
	if err := states.RegisterExec(reg, st, render.Default()); err != nil {
		return nil, fmt.Errorf("minion: state functions: %w", err)
	}
	return reg, nil
}
