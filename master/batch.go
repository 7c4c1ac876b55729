package master

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/batch"
	"github.com/gsalt/gsalt/wire/payload"
)

// Master-side batches (Salt 3006's BatchAsync, salt/cli/batch_async.py,
// as shipped in the 3006 tree gsalt is checked against): a publish whose
// client kwargs carry "batch" is not sent to every target at once. The
// master answers at once with a batch jid and the targeted minions, pings
// them, and keeps at most batch-size of the minions that answered running
// the job, every sub-job under the batch jid, so the returns are
// salt/job/<batch jid>/ret/<id> and jobs.lookup_jid <batch jid> shows them
// all. Events: salt/batch/<jid>/start {available_minions, down_minions,
// metadata} and salt/batch/<jid>/done {... done_minions, timedout_minions}.
// Used by `gsalt -b N --async` and by reactor local reactions with batch.

// maxBatches bounds the batches running at once; a publish beyond it is
// refused with ErrBusy rather than queued without limit.
const maxBatches = 64

// batchQueue is the event queue of one batch: its sub-jobs' returns.
const batchQueue = 1 << 12

// batchAsyncRequired is batch_async_required: the master's batch_async
// threshold option (default 1: always; -1: only when the targets are at
// least the batch size; 0: never).
func (m *Master) batchAsyncRequired(minions []string, size string) bool {
	threshold := int64(1)
	if v, ok := m.cfg.Opts.Get("batch_async"); ok {
		if bm, isMap := payload.FromGo(v).(*payload.Map); isMap {
			if t, ok := bm.Get("threshold"); ok {
				if n, ok := payload.AsInt(t); ok {
					threshold = n
				}
			}
		}
	}
	switch {
	case threshold == -1:
		b, err := batch.Size(size, len(minions))
		return err == nil && len(minions) >= b
	case threshold > 0:
		return int64(len(minions)) >= threshold
	}
	return false
}

// batchJob is one running master-side batch.
type batchJob struct {
	m        *Master
	clear    *payload.Map // the client's publish load (kwargs without batch)
	jid      string
	size     string
	metadata *payload.Map
	timeout  time.Duration // before a find_job on a sub-job
	gather   time.Duration // gather_job_timeout
	presence time.Duration // how long the presence ping is awaited
	delay    time.Duration // batch_delay: pause before the next sub-job
	targeted []string
}

// startBatch answers a batch publish: it allocates the batch jid and runs
// the batch in the background. clear is the publish load; kwargs its
// client kwargs (holding "batch").
func (m *Master) startBatch(clear, kwargs *payload.Map, minions []string) (string, error) {
	if m.batches.Add(1) > maxBatches {
		m.batches.Add(-1)
		return "", ErrBusy
	}
	kw := kwargs.Clone()
	sizeV, _ := kw.Delete("batch")
	b := &batchJob{m: m, clear: clear.Clone(), jid: m.jobs.NewJID(), size: payload.Text(sizeV), targeted: minions,
		gather: time.Duration(max(m.cfg.GatherJobTimeout, 1)) * time.Second,
		delay:  time.Second}
	if v, ok := kw.Delete("gather_job_timeout"); ok {
		if n, ok := payload.AsInt(v); ok && n > 0 {
			b.gather = time.Duration(n) * time.Second
		}
	}
	b.presence = b.gather
	if v, ok := kw.Get("batch_presence_ping_timeout"); ok {
		if n, ok := payload.AsInt(v); ok && n > 0 {
			b.presence = time.Duration(n) * time.Second
		}
	}
	if v, ok := kw.Get("batch_delay"); ok {
		switch f := v.(type) {
		case float64:
			if f >= 0 {
				b.delay = time.Duration(f * float64(time.Second))
			}
		default:
			if n, ok := payload.AsInt(v); ok && n >= 0 {
				b.delay = time.Duration(n) * time.Second
			}
		}
	}
	timeout := m.cfg.Timeout
	if v, ok := clear.Get("timeout"); ok {
		if n, ok := payload.AsInt(v); ok && n > 0 {
			timeout = int(n)
		}
	}
	b.timeout = time.Duration(max(timeout, 1)) * time.Second
	b.metadata = payload.NewMap()
	if md, ok := kw.Get("metadata"); ok {
		if mm, isMap := md.(*payload.Map); isMap {
			b.metadata = mm.Clone()
		}
	}
	b.clear.Set("kwargs", kw)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer m.batches.Add(-1)
		b.run(m.ctx)
	}()
	m.log.Info("started a batch", "jid", b.jid, "batch", b.size, "targeted", len(minions))
	return b.jid, nil
}

// subLoad is the publish load of one sub-job on ids under the batch jid.
func (b *batchJob) subLoad(ids []string, fun any, arg []any, jid string) *payload.Map {
	l := b.clear.Clone()
	l.Set("tgt", strAny(ids))
	l.Set("tgt_type", "list")
	l.Set("jid", jid)
	if fun != nil {
		l.Set("fun", fun)
		l.Set("arg", arg)
		l.Set("kwargs", payload.NewMap("gather_job_timeout", int64(b.gather/time.Second)))
		l.Set("ret", "")
	} else {
		kw := l.Map("kwargs").Clone()
		kw.Set("metadata", b.metadata)
		l.Set("kwargs", kw)
	}
	return l
}

// run is BatchAsync.start to end_batch.
func (b *batchJob) run(ctx context.Context) {
	m := b.m
	pingJID := m.jobs.NewJID()
	b.metadata.Set("batch_jid", b.jid)
	b.metadata.Set("ping_jid", pingJID)
	ping := m.bus.Subscribe(event.Prefix("salt/job/"+pingJID+"/ret/"), batchQueue)
	defer ping.Close()
	pl := b.subLoad(b.targeted, "test.ping", []any{}, pingJID)
	tgt, _ := b.clear.Get("tgt")
	pl.Set("tgt", tgt)
	pl.Set("tgt_type", b.clear.Str("tgt_type"))
	_, targeted, _, err := m.publish(pl)
	if err != nil && !errors.Is(err, ErrNoMinions) {
		m.log.Error("batch: presence ping failed", "jid", b.jid, "err", err)
	}
	if len(targeted) > 0 {
		b.targeted = targeted
	}
	// Start when every targeted minion answered, or after the presence
	// ping timeout with those that did.
	avail := map[string]bool{}
	deadline := time.NewTimer(b.presence)
	defer deadline.Stop()
wait:
	for len(avail) < len(b.targeted) {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ping.C():
			if !ok {
				break wait
			}
			if id := returnID(ev); id != "" {
				avail[id] = true
			}
		case <-deadline.C:
			break wait
		}
	}
	available := sortedKeys(avail)
	var down []string
	for _, id := range b.targeted {
		if !avail[id] {
			down = append(down, id)
		}
	}
	sort.Strings(down)
	m.fire("salt/batch/"+b.jid+"/start", payload.NewMap("available_minions", strAny(available),
		"down_minions", strAny(down), "metadata", b.metadata))
	done, timedout := b.window(ctx, available)
	m.fire("salt/batch/"+b.jid+"/done", payload.NewMap("available_minions", strAny(available),
		"down_minions", strAny(down), "done_minions", strAny(sortedKeys(done)),
		"timedout_minions", strAny(sortedKeys(timedout)), "metadata", b.metadata))
	m.log.Info("batch done", "jid", b.jid, "done", len(done), "timedout", len(timedout), "down", len(down))
}

// findResult is the outcome of one find_job round on a sub-job.
type findResult struct{ timedout []string }

// window keeps batch-size minions running until each returned or timed
// out (did not answer a find_job), like BatchAsync.run_next/find_job.
func (b *batchJob) window(ctx context.Context, available []string) (done, timedout map[string]bool) {
	m := b.m
	done, timedout = map[string]bool{}, map[string]bool{}
	size, err := batch.Size(b.size, len(available))
	if err != nil || size < 1 {
		if err != nil {
			m.log.Error("batch: invalid batch size; data must be in the form of %10, 10% or 3", "jid", b.jid, "batch", b.size)
			for _, id := range available {
				timedout[id] = true
			}
			return done, timedout
		}
		size = 1
	}
	rets := m.bus.Subscribe(event.Prefix("salt/job/"+b.jid+"/ret/"), batchQueue)
	defer rets.Close()
	toRun := append([]string(nil), available...)
	active := map[string]bool{}
	finds := make(chan findResult, len(available)+1)
	var next <-chan time.Time
	runNext := func() {
		n := min(len(toRun), size-len(active))
		if n <= 0 {
			return
		}
		ids := toRun[:n]
		toRun = toRun[n:]
		for _, id := range ids {
			active[id] = true
		}
		l := b.subLoad(ids, nil, nil, b.jid)
		if _, _, _, err := m.publish(l); err != nil {
			m.log.Error("batch: sub-job not published", "jid", b.jid, "minions", ids, "err", err)
			for _, id := range ids {
				delete(active, id)
				timedout[id] = true
			}
			return
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			b.watchSub(ctx, ids, done, finds)
		}()
	}
	runNext()
	for len(done)+len(timedout) < len(available) {
		select {
		case <-ctx.Done():
			return done, timedout
		case ev, ok := <-rets.C():
			if !ok {
				return done, timedout
			}
			id := returnID(ev)
			if active[id] {
				delete(active, id)
				b.mark(done, id)
				if next == nil {
					next = time.After(b.delay)
				}
			}
		case fr := <-finds:
			for _, id := range fr.timedout {
				if active[id] {
					delete(active, id)
					timedout[id] = true
				}
			}
			if next == nil {
				next = time.After(b.delay)
			}
		case <-next:
			next = nil
			runNext()
		}
	}
	return done, timedout
}

// mark records a finished minion (done is read by the sub-job watchers).
func (b *batchJob) mark(done map[string]bool, id string) {
	b.m.batchMu.Lock()
	done[id] = true
	b.m.batchMu.Unlock()
}

// watchSub waits the job timeout, then asks the minions of a sub-job that
// have not returned whether they still run it (saltutil.find_job on the
// batch jid) every gather_job_timeout; those that do not answer are
// reported as timed out.
func (b *batchJob) watchSub(ctx context.Context, ids []string, done map[string]bool, out chan<- findResult) {
	m := b.m
	pending := func() []string {
		m.batchMu.Lock()
		defer m.batchMu.Unlock()
		var l []string
		for _, id := range ids {
			if !done[id] {
				l = append(l, id)
			}
		}
		return l
	}
	wait := b.timeout
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		left := pending()
		if len(left) == 0 {
			return
		}
		fjid := m.jobs.NewJID()
		fsub := m.bus.Subscribe(event.Prefix("salt/job/"+fjid+"/ret/"), batchQueue)
		l := b.subLoad(left, "saltutil.find_job", []any{b.jid}, fjid)
		_, _, _, err := m.publish(l)
		running := map[string]bool{}
		if err == nil {
			gt := time.NewTimer(b.gather)
		collect:
			for {
				select {
				case <-ctx.Done():
					gt.Stop()
					fsub.Close()
					return
				case ev, ok := <-fsub.C():
					if !ok {
						break collect
					}
					if r, _ := ev.Data.Get("return"); payload.Truthy(r) {
						running[returnID(ev)] = true
					}
				case <-gt.C:
					break collect
				}
			}
		}
		fsub.Close()
		var gone, still []string
		for _, id := range pending() {
			if running[id] {
				still = append(still, id)
			} else {
				gone = append(gone, id)
			}
		}
		if len(gone) > 0 {
			out <- findResult{timedout: gone}
		}
		if len(still) == 0 {
			return
		}
		ids, wait = still, 0
	}
}

// returnID is the minion id of a return event.
func returnID(ev event.Event) string {
	if ev.Data == nil {
		return ""
	}
	if id := ev.Data.Str("id"); id != "" {
		return id
	}
	if i := lastSlash(ev.Tag); i >= 0 {
		return ev.Tag[i+1:]
	}
	return ""
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// sortedKeys returns a set's members in order.
func sortedKeys(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
