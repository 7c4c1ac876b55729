package jobcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/gsalt/gsalt/returners"
	"github.com/gsalt/gsalt/wire/payload"
)

// External is an external job cache kept beside the local store: Salt's
// master_job_cache naming a returner (pgjsonb). The master hands it every
// job load and return without waiting for it; the jobs runners read the
// local store and the external one together (View), so jobs published by
// other masters on the same database show up too.
type External interface {
	// Name is the returner's name ("pgjsonb").
	Name() string
	// SaveLoad queues save_load(jid, load).
	SaveLoad(jid string, load *payload.Map)
	// Return queues a minion return as Salt's store_job does for a
	// master_job_cache other than local_cache: save_load(jid, load), then
	// returner(load), load being the whole _return load.
	Return(load *payload.Map)
	// Get reads a job; ErrNoJob when the external cache has none.
	Get(ctx context.Context, jid string) (*Job, error)
	// List reads every job (loads only).
	List(ctx context.Context) ([]*Job, error)
	// Clean is clean_old_jobs (keep_jobs_seconds, archive_jobs).
	Clean(ctx context.Context) error
	// Close flushes what it can and closes.
	Close() error
}

// ReturnerCache is an External over a returner (returners.JobCache) and a
// Queue carrying its writes (spooled on disk while the backend is down).
type ReturnerCache struct {
	name    string
	rc      returners.JobCache
	q       *returners.Queue
	keep    time.Duration
	archive bool
}

// NewReturnerCache builds the external job cache named name over rc, its
// writes going through q. keep and archive are keep_jobs_seconds and
// archive_jobs.
func NewReturnerCache(name string, rc returners.JobCache, q *returners.Queue, keep time.Duration, archive bool) *ReturnerCache {
	return &ReturnerCache{name: name, rc: rc, q: q, keep: keep, archive: archive}
}

// Name returns the returner's name.
func (r *ReturnerCache) Name() string { return r.name }

// Queue returns the write queue (stats, Flush).
func (r *ReturnerCache) Queue() *returners.Queue { return r.q }

// SaveLoad queues save_load.
func (r *ReturnerCache) SaveLoad(jid string, load *payload.Map) {
	r.q.Put(returners.Op{Kind: returners.OpLoad, JID: jid, Data: load.Clone()})
}

// Return queues save_load and returner for a return load.
func (r *ReturnerCache) Return(load *payload.Map) {
	l := load.Clone()
	jid := l.Str("jid")
	now := time.Now()
	r.q.Put(returners.Op{Kind: returners.OpLoad, JID: jid, Data: l, Time: now})
	r.q.Put(returners.Op{Kind: returners.OpReturn, JID: jid, Data: l, Time: now})
}

// Get reads a job: its load and every return.
func (r *ReturnerCache) Get(ctx context.Context, jid string) (*Job, error) {
	load, err := r.rc.GetLoad(ctx, jid)
	if err != nil {
		return nil, err
	}
	rets, err := r.rc.GetJID(ctx, jid)
	if err != nil {
		return nil, err
	}
	if load == nil && rets.Len() == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, jid)
	}
	j := &Job{JID: jid, Load: load, Returns: map[string]*payload.Map{}}
	for _, it := range rets.Items() {
		if full, ok := it.Value.(*payload.Map); ok {
			j.Returns[payload.KeyString(it.Key)] = recordOf(full)
		}
	}
	return j, nil
}

// recordOf keeps the fields of a full return the local store keeps.
func recordOf(full *payload.Map) *payload.Map {
	rec := payload.NewMap()
	for _, k := range []string{"return", "retcode", "success", "out", "fun", "fun_args"} {
		if v, ok := full.Get(k); ok {
			rec.Set(k, v)
		}
	}
	return rec
}

// List reads every job's load.
func (r *ReturnerCache) List(ctx context.Context) ([]*Job, error) {
	jl, err := r.rc.GetJIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Job, 0, len(jl))
	for _, j := range jl {
		out = append(out, &Job{JID: j.JID, Load: j.Load})
	}
	return out, nil
}

// Clean runs clean_old_jobs.
func (r *ReturnerCache) Clean(ctx context.Context) error {
	return r.rc.CleanOldJobs(ctx, r.keep, r.archive)
}

// Close closes the queue (writes left go to its spool) and the returner.
func (r *ReturnerCache) Close() error {
	return errors.Join(r.q.Close(), r.rc.Close())
}

// View reads the local store and an external job cache together: the
// jobs runners' read path when master_job_cache names a returner. A job in
// both keeps the local load (the publish load) and gets the returns of
// both; when the external cache cannot be read, the local store answers
// alone (logged).
type View struct {
	Local   *Cache
	Ext     External
	Log     *slog.Logger
	Timeout time.Duration
}

func (v *View) ctx() (context.Context, context.CancelFunc) {
	t := v.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	return context.WithTimeout(context.Background(), t)
}

func (v *View) warn(what string, err error) {
	l := v.Log
	if l == nil {
		l = slog.Default()
	}
	l.Warn("job cache: cannot read the external job cache; answering from the local store", "returner", v.Ext.Name(), "read", what, "err", err)
}

// Get returns a job from both stores.
func (v *View) Get(jid string) (*Job, error) {
	local, lerr := v.Local.Get(jid)
	if lerr != nil && !errors.Is(lerr, ErrNoJob) {
		return nil, lerr
	}
	ctx, cancel := v.ctx()
	defer cancel()
	ext, eerr := v.Ext.Get(ctx, jid)
	if eerr != nil && !errors.Is(eerr, ErrNoJob) {
		v.warn("get_jid "+jid, eerr)
	}
	switch {
	case local == nil && ext == nil:
		return nil, lerr
	case local == nil:
		return ext, nil
	case ext == nil:
		return local, nil
	}
	for id, r := range ext.Returns {
		if _, ok := local.Returns[id]; !ok {
			local.Returns[id] = r
		}
	}
	return local, nil
}

// List returns the jobs of both stores, by jid.
func (v *View) List() ([]*Job, error) {
	local, lerr := v.Local.List()
	if lerr != nil && !errors.Is(lerr, ErrDamaged) {
		return nil, lerr
	}
	ctx, cancel := v.ctx()
	defer cancel()
	ext, eerr := v.Ext.List(ctx)
	if eerr != nil {
		v.warn("get_jids", eerr)
	}
	seen := make(map[string]bool, len(local))
	out := append([]*Job(nil), local...)
	for _, j := range local {
		seen[j.JID] = true
	}
	for _, j := range ext {
		if !seen[j.JID] {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(i, k int) bool { return out[i].JID < out[k].JID })
	return out, lerr
}

// Lost returns the local store's lost jobs.
func (v *View) Lost() ([]LostJob, error) { return v.Local.Lost() }
