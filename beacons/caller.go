package beacons

import (
	"context"
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/modules"
)

// RegistryCaller is a Caller running functions of a modules.Registry
// directly (no job, no return), the way a Salt beacon calls __salt__.
type RegistryCaller struct {
	Registry *modules.Registry
	// Env returns the environment functions run in (the minion's current
	// one); nil gives an empty Env.
	Env func() *modules.Env
}

// Call implements Caller. A missing function is ErrNotAvailable; a
// CommandExecutionError also wraps ErrExecution.
func (rc RegistryCaller) Call(ctx context.Context, fun string, args ...any) (ret any, err error) {
	if rc.Registry == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotAvailable, fun)
	}
	fn, ok := rc.Registry.Lookup(fun)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotAvailable, fun)
	}
	bound, err := modules.Binder{}.Bind(fn, args, nil)
	if err != nil {
		return nil, fmt.Errorf("beacons: %s: %w", fun, err)
	}
	var env *modules.Env
	if rc.Env != nil {
		env = rc.Env()
	}
	if env == nil {
		env = &modules.Env{}
	}
	defer func() {
		if p := recover(); p != nil {
			ret, err = nil, fmt.Errorf("beacons: %s panicked: %v", fun, p)
		}
	}()
	ret, err = fn.Fn(ctx, &modules.Call{Fun: fun, Env: env, Args: bound})
	if err != nil && errors.Is(err, modules.ErrExecution) {
		return nil, fmt.Errorf("%w: %w", ErrExecution, err)
	}
	return ret, err
}
