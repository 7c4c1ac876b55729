package masterd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/returners"
	retbuiltin "github.com/gsalt/gsalt/returners/builtin"
)

// eventReturnQueue bounds the events waiting between the bus and the
// event returners; past it the bus drops (and counts) them.
const eventReturnQueue = 1 << 14

// masterReturner is one returner the master writes to (master_job_cache
// or event_return) with its write queue.
type masterReturner struct {
	name string
	r    returners.Returner
	q    *returners.Queue
}

// masterReturners holds the returners of a master: the external job cache
// and the event returners, sharing one queue (and spool) per returner.
type masterReturners struct {
	log    *slog.Logger
	byName map[string]*masterReturner
	ext    *jobcache.ReturnerCache
	evs    []*masterReturner
	sub    *event.Subscription
	wg     sync.WaitGroup
	stop   chan struct{}
}

// openReturners opens the returners named by master_job_cache (other than
// local_cache) and event_return. Writes go through a queue spooled on disk
// in cachedir/returners/NAME.spool (bounded by returner_spool_max_records
// and returner_spool_max_bytes).
func openReturners(cfg *config.Master, reg *returners.Registry, log *slog.Logger) (*masterReturners, error) {
	if reg == nil {
		reg = retbuiltin.New()
	}
	mr := &masterReturners{log: log, byName: map[string]*masterReturner{}, stop: make(chan struct{})}
	env := returners.Env{ID: cfg.ID, Log: log, Option: func(k string) (any, bool) { return cfg.Opts.Get(k) }}
	open := func(name, what string) (*masterReturner, error) {
		if r, ok := mr.byName[name]; ok {
			return r, nil
		}
		r, err := reg.Open(name, env)
		if err != nil {
			return nil, fmt.Errorf("masterd: %s: %w", what, err)
		}
		b, ok := r.(returners.Batcher)
		if !ok {
			r.Close()
			return nil, fmt.Errorf("masterd: %s: returner %q cannot be used by gsalt-master", what, name)
		}
		dir := filepath.Join(cfg.CacheDir, "returners")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			r.Close()
			return nil, fmt.Errorf("masterd: %w", err)
		}
		maxN, _ := cfg.Opts.Int("returner_spool_max_records")
		maxB, _ := cfg.Opts.Int("returner_spool_max_bytes")
		q, err := returners.NewQueue(b, returners.QueueOptions{Name: name + " returner", SpoolPath: filepath.Join(dir, name+".spool"),
			MaxSpool: maxN, MaxSpoolBytes: int64(maxB), Logger: log})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("masterd: %s: %w", what, err)
		}
		mr.byName[name] = &masterReturner{name: name, r: r, q: q}
		return mr.byName[name], nil
	}
	if jc := cfg.Opts.Str("master_job_cache"); jc != "" && jc != "local_cache" {
		r, err := open(jc, "master_job_cache")
		if err != nil {
			mr.Close()
			return nil, err
		}
		rc, ok := r.r.(returners.JobCache)
		if !ok {
			mr.Close()
			return nil, fmt.Errorf("masterd: master_job_cache: returner %q has no job cache functions", jc)
		}
		keep := time.Duration(cfg.KeepJobsSeconds) * time.Second
		mr.ext = jobcache.NewReturnerCache(jc, rc, r.q, keep, cfg.Opts.Bool("archive_jobs"))
		log.Info("master_job_cache: job loads and returns are written to the returner too; the jobs runners read it", "returner", jc)
	}
	for _, name := range returners.Names(mustOpt(cfg, "event_return")) {
		r, err := open(name, "event_return")
		if err != nil {
			mr.Close()
			return nil, err
		}
		if _, ok := r.r.(returners.EventReturner); !ok {
			mr.Close()
			return nil, fmt.Errorf("masterd: event_return: %w: %s", returners.ErrUnsupported, returners.MissingText(name, "event_return"))
		}
		mr.evs = append(mr.evs, r)
	}
	return mr, nil
}

// External returns the external job cache, nil without one.
func (mr *masterReturners) External() jobcache.External {
	if mr == nil || mr.ext == nil {
		return nil
	}
	return mr.ext
}

// startEvents forwards the bus's events to the event returners like
// Salt's EventReturn process: event_return_whitelist/blacklist (fnmatch
// on the tag), batches of event_return_queue events or
// event_return_queue_max_seconds.
func (mr *masterReturners) startEvents(cfg *config.Master, bus *event.Bus) {
	if mr == nil || len(mr.evs) == 0 {
		return
	}
	white := cfg.Opts.StrList("event_return_whitelist")
	black := cfg.Opts.StrList("event_return_blacklist")
	size, _ := cfg.Opts.Int("event_return_queue")
	maxSecs, _ := cfg.Opts.Int("event_return_queue_max_seconds")
	keep := func(tag string) bool {
		ok := len(white) == 0
		for _, w := range white {
			if py.Fnmatch(tag, w) {
				ok = true
				break
			}
		}
		for _, b := range black {
			if py.Fnmatch(tag, b) {
				return false
			}
		}
		return ok
	}
	mr.sub = bus.Subscribe(event.All(), eventReturnQueue)
	mr.wg.Add(1)
	go func() {
		defer mr.wg.Done()
		var batch []returners.Event
		var oldest time.Time
		var lastDropped uint64
		flush := func() {
			if len(batch) == 0 {
				return
			}
			for _, r := range mr.evs {
				r.q.Put(returners.Op{Kind: returners.OpEvents, Events: batch})
			}
			batch = nil
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-mr.stop:
				flush()
				return
			case <-tick.C:
				if d := mr.sub.Dropped(); d != lastDropped {
					mr.log.Error("event_return: events dropped: the event returners fall behind the bus", "dropped_total", d, "queue", eventReturnQueue)
					lastDropped = d
				}
				if maxSecs > 0 && len(batch) > 0 && time.Since(oldest) >= time.Duration(maxSecs)*time.Second {
					flush()
				}
			case ev, ok := <-mr.sub.C():
				if !ok {
					flush()
					return
				}
				if keep(ev.Tag) {
					if len(batch) == 0 {
						oldest = time.Now()
					}
					var data any
					if ev.Data != nil {
						data = ev.Data.Clone()
					}
					batch = append(batch, returners.Event{Tag: ev.Tag, Data: data})
				}
				if len(batch) >= size || (maxSecs > 0 && time.Since(oldest) >= time.Duration(maxSecs)*time.Second) {
					flush()
				}
			}
		}
	}()
}

// Flush waits until every queued write reached the returners (tests).
func (mr *masterReturners) Flush(ctx context.Context) error {
	if mr == nil {
		return nil
	}
	var errs []error
	for _, r := range mr.byName {
		errs = append(errs, r.q.Flush(ctx))
	}
	return errors.Join(errs...)
}

// Close stops the event forwarding and closes the queues (what is left
// goes to the spools) and the returners.
func (mr *masterReturners) Close() error {
	if mr == nil {
		return nil
	}
	select {
	case <-mr.stop:
		return nil
	default:
	}
	close(mr.stop)
	if mr.sub != nil {
		mr.sub.Close()
	}
	mr.wg.Wait()
	var errs []error
	for _, r := range mr.byName {
		errs = append(errs, r.q.Close(), r.r.Close())
	}
	return errors.Join(errs...)
}
