package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// keepaliveModule asks for a probe every iv (proxymod.Keepaliver).
type keepaliveModule struct{ iv time.Duration }

func (keepaliveModule) Init(context.Context, *proxymod.Config) error { return nil }
func (keepaliveModule) Ping(context.Context) (bool, error)           { return true, nil }
func (keepaliveModule) Grains(context.Context) (*payload.Map, error) {
	return payload.NewMap(), nil
}
func (keepaliveModule) Shutdown(context.Context) error     { return nil }
func (m keepaliveModule) KeepaliveInterval() time.Duration { return m.iv }

// TestProbeWait: an initialised module is probed at its own keepalive
// interval while the fleet's probes stay within probeRate a second, less
// often in a larger fleet, never less often than
// proxy_keep_alive_interval; a module without its own interval at
// proxy_keep_alive_interval.
func TestProbeWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices int64
		mod     proxymod.Module
		every   time.Duration
		want    time.Duration
	}{
		{"small fleet: the module's 5 s", 10, keepaliveModule{5 * time.Second}, time.Minute, 5 * time.Second},
		{"1000 devices: still 5 s", 1000, keepaliveModule{5 * time.Second}, time.Minute, 5 * time.Second},
		{"2000 devices: 10 s", 2000, keepaliveModule{5 * time.Second}, time.Minute, 10 * time.Second},
		{"10000 devices: 50 s", 10000, keepaliveModule{5 * time.Second}, time.Minute, 50 * time.Second},
		{"50000 devices: capped by proxy_keep_alive_interval", 50000, keepaliveModule{5 * time.Second}, time.Minute, time.Minute},
		{"a keepalive longer than the interval is ignored", 10, keepaliveModule{2 * time.Minute}, time.Minute, time.Minute},
		{"no keepalive interval of its own", 10000, keepaliveModule{0}, 3 * time.Minute, 3 * time.Minute},
		{"not a Keepaliver", 10000, &proxymod.Dummy{}, 2 * time.Minute, 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Fleet{}
			f.count.Store(tc.devices)
			d := &Device{f: f, mod: tc.mod, initialized: true}
			k := &keeper{d: d, every: tc.every}
			if got := k.probeWait(); got != tc.want {
				t.Errorf("probeWait = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestFleetProcDelay: a device's job writes its proc file after 1 s in
// fleets of up to 1,000 devices, 1 ms a device beyond.
func TestFleetProcDelay(t *testing.T) {
	for _, tc := range []struct {
		devices int64
		want    time.Duration
	}{
		{1, time.Second},
		{1000, time.Second},
		{2500, 2500 * time.Millisecond},
		{10000, 10 * time.Second},
	} {
		f := &Fleet{}
		f.count.Store(tc.devices)
		if got := f.procDelay(); got != tc.want {
			t.Errorf("%d devices: procDelay = %s, want %s", tc.devices, got, tc.want)
		}
	}
}
