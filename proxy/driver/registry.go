package driver

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Factory creates an unopened driver.
type Factory func(o Options) (Driver, error)

// Registry maps driver names (NAPALM's driver: values) to factories. It is
// safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Default returns a new registry with the built-in drivers: "ios" (alias
// "iosxe", Cisco IOS / IOS-XE) and "eos" (Arista EOS); "nxos_ssh" (Cisco NX-OS
// over SSH) is also registered as "nxos", whose NAPALM driver uses NX-API
// instead: gsalt speaks SSH only; "iosxr" drives Cisco IOS XR over its CLI
// (NAPALM's iosxr driver uses the XML agent).
func Default() *Registry {
	r := NewRegistry()
	for _, e := range []struct {
		name string
		f    Factory
	}{{"ios", NewIOS}, {"iosxe", NewIOS}, {"eos", NewEOS}, {"frr", NewFRR}, {"nxos_ssh", NewNXOS}, {"nxos", NewNXOS}, {"junos", NewJunos}, {"iosxr", NewIOSXR}} {
		if err := r.Register(e.name, e.f); err != nil {
			// A bad built-in name is a bug in this list (TestRegistry
			// checks the names); the driver is left out, not replaced.
			slog.Error("driver: built-in driver not registered", "err", err)
		}
	}
	return r
}

// Register adds a driver factory under name (case-insensitive). An empty
// name, a nil factory or a name already registered is an error.
func (r *Registry) Register(name string, f Factory) error {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" || f == nil {
		return fmt.Errorf("driver: bad registration %q", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[key]; dup {
		return fmt.Errorf("driver: %q registered twice", key)
	}
	r.factories[key] = f
	return nil
}

// New creates an unopened driver by name.
func (r *Registry) New(name string, o Options) (Driver, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	r.mu.RLock()
	f, ok := r.factories[key]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownDriver, name, strings.Join(r.Names(), ", "))
	}
	return f(o)
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.factories))
	for n := range r.factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
