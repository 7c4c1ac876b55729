package minion

import (
	"context"

	"github.com/gsalt/gsalt/beacons"
	bbuiltin "github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/modules"
)

// newBeacons builds the minion's beacon manager (the "beacons" service):
// beacons from the minion config and pillar, run by the built-in beacon
// modules, calling execution functions through the minion's registry.
func (m *Minion) newBeacons() *beacons.Manager {
	return beacons.New(beacons.Options{
		Opts:    m.cfg.Opts,
		ID:      m.id,
		Pillar:  m.Pillar,
		Grains:  m.Grains,
		Caller:  beacons.RegistryCaller{Registry: m.reg, Env: func() *modules.Env { return m.env() }},
		Modules: bbuiltin.All(bbuiltin.Options{}),
		StateRunning: func() bool {
			for _, j := range m.jobs.Running() {
				if beacons.IsStateFunction(j.Str("fun")) {
					return true
				}
			}
			return false
		},
		Logger: m.log,
	})
}

// runBeacons runs the beacon loop until ctx ends, sending each loop's
// events to the master in one _minion_event (dropped while not connected,
// like Salt). A swarm identity joins the swarm's shared beacon clock
// instead of running a timer of its own.
func (m *Minion) runBeacons(ctx context.Context) {
	b := m.beacons
	if b == nil {
		return
	}
	if m.beaconClock != nil {
		// No goroutine waits for the end: the clock drops the minion
		// when ctx ends.
		m.beaconClock.join(m, b, m.sendBeaconEvents)
		context.AfterFunc(ctx, func() {
			m.beaconClock.leave(m)
			b.Close()
		})
		return
	}
	b.Run(ctx, m.sendBeaconEvents)
}

// sendBeaconEvents sends one loop's beacon events to the master.
func (m *Minion) sendBeaconEvents(ctx context.Context, evs []beacons.Event) {
	load := beacons.EventsLoad(m.id, evs)
	if load == nil || m.current() == nil {
		return
	}
	if _, err := m.request(ctx, load, defaultRequestTries, defaultRequestTimeout); err != nil {
		m.log.Info("sending beacon events failed", "err", err)
	}
}
