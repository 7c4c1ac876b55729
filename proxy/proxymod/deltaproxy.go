package proxymod

import (
	"context"

	"github.com/gsalt/gsalt/wire/payload"
)

// DeltaproxyTypeName is the proxytype of Salt's control proxy
// (salt/proxy/deltaproxy.py), which serves the sub-proxies listed in its
// proxy:ids when the configuration sets metaproxy: deltaproxy.
const DeltaproxyTypeName = "deltaproxy"

// DeltaproxyType is Salt's deltaproxy control proxy module: no device of
// its own, three made-up grains, ping always true.
func DeltaproxyType() Type {
	return Type{Name: DeltaproxyTypeName, New: func() Module { return &Deltaproxy{} }}
}

// Deltaproxy is the control proxy's module instance.
type Deltaproxy struct {
	initialized bool
}

// Init implements Module.
func (d *Deltaproxy) Init(context.Context, *Config) error {
	d.initialized = true
	return nil
}

// Ping implements Module.
func (d *Deltaproxy) Ping(context.Context) (bool, error) { return true, nil }

// Grains implements Module: the grains Salt's deltaproxy module makes up.
func (d *Deltaproxy) Grains(context.Context) (*payload.Map, error) {
	return payload.NewMap("dummy_grain_1", "one", "dummy_grain_2", "two", "dummy_grain_3", "three"), nil
}

// Shutdown implements Module (a no-op, as in Salt).
func (d *Deltaproxy) Shutdown(context.Context) error { return nil }
