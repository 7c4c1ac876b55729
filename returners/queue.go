package returners

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gsalt/gsalt/internal/spool"
	"github.com/gsalt/gsalt/wire/payload"
)

// Kinds of Op.
const (
	OpLoad   = "load"   // save_load(jid, load)
	OpReturn = "return" // returner(ret)
	OpEvents = "events" // event_return(events)
)

// Op is one write a Queue carries to a Batcher.
type Op struct {
	Kind string
	JID  string
	// Data is the load (OpLoad) or the return (OpReturn).
	Data   *payload.Map
	Events []Event
	// Time is when the write was asked for (the rows' alter_time).
	Time time.Time
}

// Batcher applies queued writes, in order, in as few round trips as it
// can. An error wrapping ErrUnavailable means the backend is down: the
// whole batch is kept and retried.
type Batcher interface {
	Apply(ctx context.Context, ops []Op) error
}

// QueueOptions configure a Queue.
type QueueOptions struct {
	// Name names the queue in logs ("pgjsonb job cache").
	Name string
	// SpoolPath is the on-disk spool file; "" keeps writes in memory only.
	SpoolPath string
	// MaxSpool and MaxSpoolBytes bound the spool (defaults 100000 records,
	// 256 MiB).
	MaxSpool      int
	MaxSpoolBytes int64
	// Memory bounds the writes waiting in memory (default 4096); past it
	// they go to the spool.
	Memory int
	// Batch bounds the writes applied at once (default 256).
	Batch int
	// Retry is the first wait after a failure (default 1 s), doubling to
	// MaxRetry (default 30 s).
	Retry, MaxRetry time.Duration
	// Logger logs spool and retry trouble (default slog.Default()).
	Logger *slog.Logger
}

// QueueStats describe a Queue.
type QueueStats struct {
	// Pending are writes in memory, Spooled those on disk.
	Pending, Spooled int
	// Written and Dropped count writes applied and dropped (spool full or
	// refused by the backend).
	Written, Dropped uint64
	// Down is set while the backend is unavailable.
	Down    bool
	LastErr string
}

// Queue carries writes to a Batcher in the background: bounded in memory,
// spooled on disk while the backend is down, replayed oldest first when it
// is back. Put never waits for the backend.
type Queue struct {
	b   Batcher
	o   QueueOptions
	log *slog.Logger
	sp  *spool.Spool

	// flight orders a failed batch's spooling before newer overflow.
	flight      sync.Mutex
	mu          sync.Mutex
	mem         []Op
	stats       QueueStats
	lastDropLog time.Time

	wake   chan struct{}
	idle   chan struct{} // closed and replaced when everything is written
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// NewQueue starts a queue in front of b.
func NewQueue(b Batcher, o QueueOptions) (*Queue, error) {
	if o.MaxSpool <= 0 {
		o.MaxSpool = 100000
	}
	if o.MaxSpoolBytes <= 0 {
		o.MaxSpoolBytes = 256 << 20
	}
	if o.Memory <= 0 {
		o.Memory = 4096
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	if o.MaxRetry <= 0 {
		o.MaxRetry = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	q := &Queue{b: b, o: o, log: o.Logger, wake: make(chan struct{}, 1), idle: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	if o.SpoolPath != "" {
		sp, err := spool.Open(o.SpoolPath, o.MaxSpool, o.MaxSpoolBytes)
		if err != nil {
			return nil, err
		}
		q.sp = sp
		n, _ := sp.Len()
		q.log.Info(o.Name+": writes the database cannot take are spooled on disk and replayed in order; when the spool is full, new writes are dropped (counted and logged)",
			"spool", o.SpoolPath, "max_records", o.MaxSpool, "max_bytes", o.MaxSpoolBytes, "spooled_now", n)
	} else {
		q.log.Info(o.Name+": no spool; writes wait in memory while the database is down and are dropped past the limit", "max_pending", o.Memory)
	}
	go q.run()
	return q, nil
}

// Put queues a write. It does not wait for the backend.
func (q *Queue) Put(op Op) {
	if op.Time.IsZero() {
		op.Time = time.Now()
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.drop(1, "the queue is closed")
		return
	}
	if len(q.mem) < q.o.Memory {
		q.mem = append(q.mem, op)
		q.mu.Unlock()
		q.poke()
		return
	}
	q.mu.Unlock()
	// Memory is full: move it and op to the spool, after any batch in
	// flight (which is older).
	q.flight.Lock()
	q.mu.Lock()
	ops := append(q.mem, op)
	q.mem = nil
	q.mu.Unlock()
	q.spoolOps(ops)
	q.flight.Unlock()
	q.poke()
}

func (q *Queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Stats returns the queue's counters.
func (q *Queue) Stats() QueueStats {
	q.mu.Lock()
	s := q.stats
	s.Pending = len(q.mem)
	q.mu.Unlock()
	if q.sp != nil {
		s.Spooled, _ = q.sp.Len()
	}
	return s
}

// Flush waits until every queued write was applied (or ctx ends).
func (q *Queue) Flush(ctx context.Context) error {
	for {
		q.mu.Lock()
		idle := q.idle
		q.mu.Unlock()
		q.poke()
		select {
		case <-idle:
			if q.empty() {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("%s: flush: %w (%d pending, %d spooled)", q.o.Name, ctx.Err(), q.Stats().Pending, q.Stats().Spooled)
		}
	}
}

func (q *Queue) empty() bool {
	q.mu.Lock()
	n := len(q.mem)
	q.mu.Unlock()
	if q.sp != nil {
		s, _ := q.sp.Len()
		n += s
	}
	return n == 0
}

// Close stops the queue: writes still in memory go to the spool (or are
// tried once more without one), then the spool is closed.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.mu.Unlock()
	close(q.stop)
	<-q.done
	q.mu.Lock()
	rest := q.mem
	q.mem = nil
	q.mu.Unlock()
	if len(rest) > 0 {
		if q.sp != nil {
			q.spoolOps(rest)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := q.b.Apply(ctx, rest); err != nil {
				q.drop(len(rest), err.Error())
			}
			cancel()
		}
	}
	if q.sp != nil {
		if n, _ := q.sp.Len(); n > 0 {
			q.log.Warn(q.o.Name+": stopping with writes in the spool; they are replayed at the next start", "spooled", n, "spool", q.o.SpoolPath)
		}
		return q.sp.Close()
	}
	return nil
}

func (q *Queue) drop(n int, why string) {
	q.mu.Lock()
	q.stats.Dropped += uint64(n)
	total := q.stats.Dropped
	logIt := time.Since(q.lastDropLog) > 10*time.Second
	if logIt {
		q.lastDropLog = time.Now()
	}
	q.mu.Unlock()
	if logIt {
		q.log.Error(q.o.Name+": writes DROPPED", "dropped_now", n, "dropped_total", total, "reason", why,
			"spool", q.o.SpoolPath, "max_records", q.o.MaxSpool, "max_bytes", q.o.MaxSpoolBytes)
	}
}

// spoolOps writes ops to the spool (or back to memory without one),
// dropping what does not fit.
func (q *Queue) spoolOps(ops []Op) {
	if q.sp == nil {
		q.mu.Lock()
		room := q.o.Memory - len(q.mem)
		if room < 0 {
			room = 0
		}
		keep := ops
		if len(keep) > room {
			keep = keep[:room]
		}
		q.mem = append(append([]Op(nil), keep...), q.mem...)
		q.mu.Unlock()
		if len(ops) > len(keep) {
			q.drop(len(ops)-len(keep), "memory queue full and no spool")
		}
		return
	}
	recs := make([][]byte, 0, len(ops))
	for _, op := range ops {
		b, err := encodeOp(op)
		if err != nil {
			q.drop(1, "cannot encode: "+err.Error())
			continue
		}
		recs = append(recs, b)
	}
	n, err := q.sp.Append(recs...)
	if err != nil {
		why := err.Error()
		if errors.Is(err, spool.ErrFull) {
			why = "spool full"
		}
		q.drop(len(recs)-n, why)
	}
}

func (q *Queue) run() {
	defer close(q.done)
	wait := time.Duration(0)
	var timer *time.Timer
	for {
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-q.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		select {
		case <-q.stop:
			return
		default:
		}
		progressed, err := q.step()
		switch {
		case err != nil:
			if wait == 0 {
				wait = q.o.Retry
			} else if wait *= 2; wait > q.o.MaxRetry {
				wait = q.o.MaxRetry
			}
		case progressed:
			wait = 0
		default:
			wait = 0
			q.mu.Lock()
			if len(q.mem) == 0 {
				close(q.idle)
				q.idle = make(chan struct{})
			}
			q.mu.Unlock()
			select {
			case <-q.stop:
				return
			case <-q.wake:
			}
		}
	}
}

// step applies one batch: from the spool while it holds anything, else
// from memory. It reports whether something was written.
func (q *Queue) step() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if q.sp != nil {
		if n, _ := q.sp.Len(); n > 0 {
			q.flight.Lock()
			// While the spool drains, newer writes join it behind.
			q.mu.Lock()
			mem := q.mem
			q.mem = nil
			q.mu.Unlock()
			if len(mem) > 0 {
				q.spoolOps(mem)
			}
			q.flight.Unlock()
			recs, err := q.sp.Peek(q.o.Batch)
			if err != nil || len(recs) == 0 {
				return false, err
			}
			ops := make([]Op, 0, len(recs))
			for _, r := range recs {
				op, err := decodeOp(r.Data)
				if err != nil {
					q.drop(1, "undecodable spool record: "+err.Error())
					continue
				}
				ops = append(ops, op)
			}
			if err := q.apply(ctx, ops); err != nil {
				return false, err
			}
			return true, q.sp.Remove(recs[len(recs)-1].Seq)
		}
	}
	q.flight.Lock()
	defer q.flight.Unlock()
	q.mu.Lock()
	n := min(len(q.mem), q.o.Batch)
	ops := append([]Op(nil), q.mem[:n]...)
	q.mem = q.mem[n:]
	q.mu.Unlock()
	if n == 0 {
		return false, nil
	}
	if err := q.apply(ctx, ops); err != nil {
		q.spoolOps(ops)
		return false, err
	}
	return true, nil
}

// apply runs a batch; a failure that is not ErrUnavailable retries the
// writes one by one and drops those the backend refuses.
func (q *Queue) apply(ctx context.Context, ops []Op) error {
	err := q.b.Apply(ctx, ops)
	if err == nil {
		q.up(len(ops))
		return nil
	}
	if errors.Is(err, ErrUnavailable) {
		q.down(err)
		return err
	}
	for _, op := range ops {
		if err := q.b.Apply(ctx, []Op{op}); err != nil {
			if errors.Is(err, ErrUnavailable) {
				q.down(err)
				return err
			}
			q.log.Error(q.o.Name+": a write was refused by the database and dropped", "kind", op.Kind, "jid", op.JID, "err", err)
			q.drop(1, err.Error())
			continue
		}
		q.up(1)
	}
	return nil
}

func (q *Queue) up(n int) {
	q.mu.Lock()
	was := q.stats.Down
	q.stats.Down = false
	q.stats.Written += uint64(n)
	q.mu.Unlock()
	if was {
		sp := 0
		if q.sp != nil {
			sp, _ = q.sp.Len()
		}
		q.log.Warn(q.o.Name+": the database is back; replaying the spool", "spooled", sp)
	}
}

func (q *Queue) down(err error) {
	q.mu.Lock()
	was := q.stats.Down
	q.stats.Down = true
	q.stats.LastErr = err.Error()
	q.mu.Unlock()
	if !was {
		q.log.Error(q.o.Name+": the database is unavailable; writes are spooled and replayed when it is back", "err", err, "spool", q.o.SpoolPath)
	}
}

func encodeOp(op Op) ([]byte, error) {
	m := payload.NewMap("kind", op.Kind, "jid", op.JID, "time", op.Time.UnixNano())
	if op.Data != nil {
		m.Set("data", op.Data)
	}
	if len(op.Events) > 0 {
		evs := make([]any, len(op.Events))
		for i, e := range op.Events {
			evs[i] = payload.NewMap("tag", e.Tag, "data", e.Data)
		}
		m.Set("events", evs)
	}
	return payload.MarshalBin(m)
}

func decodeOp(b []byte) (Op, error) {
	m, err := payload.UnmarshalMap(b)
	if err != nil {
		return Op{}, err
	}
	op := Op{Kind: m.Str("kind"), JID: m.Str("jid"), Data: m.Map("data")}
	if t, ok := m.Int("time"); ok {
		op.Time = time.Unix(0, t)
	}
	for _, e := range m.List("events") {
		if em, ok := e.(*payload.Map); ok {
			d, _ := em.Get("data")
			op.Events = append(op.Events, Event{Tag: em.Str("tag"), Data: d})
		}
	}
	return op, nil
}
