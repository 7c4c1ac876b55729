package minion

import (
	"context"
	"path/filepath"

	"github.com/gsalt/gsalt/grains"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// buildServices fills the Env.Services every job of the minion sees.
func (m *Minion) buildServices() {
	ch := masterChannel{m}
	hashType := m.cfg.HashType
	if m.cfg.FileClient == "local" {
		m.files = builtin.NewLocalFileClientOpts(m.cfg.Opts, m.cacheDir)
		m.localPillar = m.newLocalPillar()
	} else {
		m.files = builtin.NewRemoteFileClient(ch, m.cacheDir, hashType)
	}
	m.services = map[string]any{
		"master": ch,
		"events": eventBus{m},
		"jobs":   m.jobs,
		"pillar": pillarStore{m},
		"grains": grainsStore{m},
		"files":  m.files,
	}
	m.beacons = m.newBeacons()
	m.services["beacons"] = m.beacons
	m.schedule = m.newSchedule()
	m.services["schedule"] = m.schedule
	for k, v := range m.extraServices {
		m.services[k] = v
	}
}

// masterChannel is the "master" service: authenticated requests.
type masterChannel struct{ m *Minion }

// SendMaster implements builtin.MasterChannel.
func (c masterChannel) SendMaster(ctx context.Context, load *payload.Map) (any, error) {
	return c.m.request(ctx, load, defaultRequestTries, defaultRequestTimeout)
}

// eventBus is the "events" service: the minion's in-process local bus.
// It acts on the minion's own control tags and accepts every other event.
type eventBus struct{ m *Minion }

// Fire implements builtin.EventBus.
func (b eventBus) Fire(ctx context.Context, tag string, data any) bool {
	m := b.m
	switch tag {
	case "pillar_refresh":
		m.asyncRefreshPillar()
	case "grains_refresh":
		go func() {
			if err := (grainsStore{m}).RefreshGrains(m.backgroundCtx(), false); err != nil {
				m.log.Warn("grains refresh failed", "err", err)
			}
		}()
	}
	m.log.Debug("local event", "tag", tag)
	if m.onLocalEvent != nil {
		m.onLocalEvent(tag, data)
	}
	return true
}

// backgroundCtx is the run context (or Background outside Run).
func (m *Minion) backgroundCtx() context.Context {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.runCtx != nil {
		return m.runCtx
	}
	return context.Background()
}

// asyncRefreshPillar refreshes the pillar in the background.
func (m *Minion) asyncRefreshPillar() {
	if m.current() == nil {
		return
	}
	ctx := m.backgroundCtx()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.refreshPillar(ctx); err != nil {
			m.log.Warn("pillar refresh failed", "err", err)
		}
	}()
}

// pillarStore is the "pillar" service.
type pillarStore struct{ m *Minion }

// CompilePillar implements builtin.PillarStore: a masterless minion
// (file_client local) compiles from its own pillar_roots, a connected one
// asks the master.
func (p pillarStore) CompilePillar(ctx context.Context, pillarenv any, override *payload.Map) (*payload.Map, error) {
	if p.m.localPillar != nil {
		return p.m.compileLocalPillar(ctx, pillarenv, override)
	}
	if p.m.current() == nil {
		return p.m.Pillar(), nil
	}
	return p.m.fetchPillar(ctx, pillarenv, override)
}

// CompilePillarExt implements builtin.PillarExtStore: pillar.ext's
// compile with an on-demand ext_pillar, locally when masterless.
func (p pillarStore) CompilePillarExt(ctx context.Context, ext any, override *payload.Map) (*payload.Map, error) {
	if p.m.localPillar != nil {
		return p.m.compileLocalPillarExt(ctx, nil, override, ext)
	}
	if p.m.current() == nil {
		return p.m.Pillar(), nil
	}
	return p.m.fetchPillarExt(ctx, nil, override, ext)
}

// RefreshPillar implements builtin.PillarStore.
func (p pillarStore) RefreshPillar(ctx context.Context, wait bool) error {
	if p.m.localPillar != nil {
		return p.m.refreshLocalPillar(ctx)
	}
	if p.m.current() == nil {
		return nil
	}
	if !wait {
		p.m.asyncRefreshPillar()
		return nil
	}
	return p.m.refreshPillar(ctx)
}

// RefreshGrains recomputes the minion's grains (with Options.GrainsFunc
// when set) and, with refreshPillar, fetches the pillar again, as
// saltutil.refresh_grains does.
func (m *Minion) RefreshGrains(ctx context.Context, refreshPillar bool) error {
	return grainsStore{m}.RefreshGrains(ctx, refreshPillar)
}

// grainsStore is the "grains" service.
type grainsStore struct{ m *Minion }

// GrainsFile implements builtin.GrainsStore.
func (g grainsStore) GrainsFile() string {
	if g.m.grainsFile != "" {
		return g.m.grainsFile
	}
	if g.m.confDir == "" {
		return filepath.Join("/etc/salt", grains.FileName)
	}
	return filepath.Join(g.m.confDir, grains.FileName)
}

// RefreshGrains implements builtin.GrainsStore.
func (g grainsStore) RefreshGrains(ctx context.Context, refreshPillar bool) error {
	m := g.m
	gr, err := m.computeGrains(ctx)
	if err != nil {
		return err
	}
	gr.Set("id", m.id)
	freeze(gr)
	m.mu.Lock()
	m.grains = gr
	m.mu.Unlock()
	if refreshPillar && m.current() != nil {
		return m.refreshPillar(ctx)
	}
	return nil
}

// newLocalPillar is the pillar compiler of a masterless minion (Salt's
// Pillar class run on the minion when file_client is local): pillar_roots
// and the pillar options from the minion's configuration, templates
// calling the minion's own execution modules.
func (m *Minion) newLocalPillar() *pillar.Compiler {
	cfg := pillar.ConfigFromOpts(m.opts)
	// The minion's own options are the Pillar's opts, as on a Salt
	// masterless minion: ext_pillar modules read its cachedir (git_pillar
	// checks out under <cachedir>/git_pillar, not the master's
	// /var/cache/salt/master).
	cfg.Opts = m.opts
	return pillar.New(cfg, pillar.Options{
		Logger: m.log,
		Caller: func(id string, gr *payload.Map) render.Caller {
			env := m.env()
			env.Grains = gr
			return states.ExecCaller{Env: env}
		},
	})
}

// compileLocalPillar compiles the pillar from the local pillar_roots.
func (m *Minion) compileLocalPillar(ctx context.Context, pillarenv any, override *payload.Map) (*payload.Map, error) {
	return m.compileLocalPillarExt(ctx, pillarenv, override, nil)
}

// compileLocalPillarExt is compileLocalPillar with an on-demand
// ext_pillar (nil for none).
func (m *Minion) compileLocalPillarExt(ctx context.Context, pillarenv any, override *payload.Map, ext any) (*payload.Map, error) {
	// opts["pillar"] is set once the minion has a pillar: Salt's local
	// compile then merges the fresh pillar over it (ssh_merge_pillar).
	req := pillar.Request{ID: m.id, Grains: m.Grains(), Override: override, Initial: m.Pillar(), Ext: ext}
	if v, ok := m.opts.Get("saltenv"); ok && v != nil {
		req.Saltenv = pyfmt.Str(v)
	}
	if pillarenv == nil {
		pillarenv, _ = m.opts.Get("pillarenv")
	}
	if pillarenv != nil {
		req.Pillarenv = pyfmt.Str(pillarenv)
	}
	return m.localPillar.Compile(ctx, req)
}

// refreshLocalPillar compiles the local pillar and makes it the in-memory one.
func (m *Minion) refreshLocalPillar(ctx context.Context) error {
	p, err := m.compileLocalPillar(ctx, nil, nil)
	if err != nil {
		return err
	}
	freeze(p)
	m.mu.Lock()
	m.pillar = p
	m.mu.Unlock()
	if m.schedule != nil {
		m.schedule.Wake()
	}
	return nil
}
