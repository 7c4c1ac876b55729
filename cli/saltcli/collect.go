package saltcli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/payload"
)

// WatchOptions tune how the returns of one job are gathered.
type WatchOptions struct {
	// Timeout is the CLI timeout: how long to wait before asking the
	// outstanding minions whether they still run the job, and how long a
	// minion that does is given again.
	Timeout time.Duration
	// GatherJobTimeout is how long the saltutil.find_job answers are
	// awaited (master option gather_job_timeout).
	GatherJobTimeout time.Duration
	// ExpectMinions reports minions that never returned as failed.
	ExpectMinions bool
	// FindJobKwargs are the client kwargs of the find_job publishes.
	FindJobKwargs *payload.Map
	// Notice receives Salt's printed notices (find_job publish failures).
	Notice io.Writer
	// Poll bounds how long the loop sleeps between checks (default 50ms).
	Poll time.Duration
	// Follow, when set, is told the jid of every saltutil.find_job round
	// the watch publishes, before it waits for that round's answers: a
	// caller sharing one event subscription between jobs (a batch) routes
	// that jid's events to the watch's channel.
	Follow func(jid string)
}

// MinionReturn is one item LocalClient.get_iter_returns yields.
type MinionReturn struct {
	ID string
	// Data is {"ret", ["out"], ["retcode"], ["jid"]} for a return.
	Data *payload.Map
	// Failed marks a minion that did not return (or was missing).
	Failed bool
}

// orderedSet is a set remembering insertion order.
type orderedSet struct {
	order []string
	has   map[string]bool
}

func newSet(ids ...string) *orderedSet {
	s := &orderedSet{has: map[string]bool{}}
	for _, id := range ids {
		s.add(id)
	}
	return s
}

func (s *orderedSet) add(id string) {
	if !s.has[id] {
		s.has[id] = true
		s.order = append(s.order, id)
	}
}

func (s *orderedSet) remove(id string) {
	if !s.has[id] {
		return
	}
	delete(s.has, id)
	for i, e := range s.order {
		if e == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// minus lists the members not in other, in order.
func (s *orderedSet) minus(other *orderedSet) []string {
	var out []string
	for _, id := range s.order {
		if !other.has[id] {
			out = append(out, id)
		}
	}
	return out
}

// tagIsJob reports whether tag is under salt/job/<jid> (Salt matches the
// prefix with startswith).
func tagIsJob(tag, jid string) bool {
	return jid != "" && strings.HasPrefix(tag, "salt/job/"+jid)
}

// Watch gathers the returns of a published job from the event bus like
// LocalClient.get_iter_returns: returns are yielded as they arrive; when
// the timeout passes, the outstanding minions are asked with
// saltutil.find_job whether they still run the job, and those that do are
// waited for again; minions that never return are yielded as failed when
// ExpectMinions is set, and so are the ids the master reported missing.
func (c *Client) Watch(ctx context.Context, ev *Events, pd *PubData, o WatchOptions, yield func(MinionReturn) error) error {
	var ch <-chan event.Event
	if ev != nil {
		ch = ev.C()
	}
	return c.WatchEvents(ctx, ch, pd, o, yield)
}

// WatchEvents is Watch reading the job's events from ch (closed or nil:
// no more events) instead of a subscription of its own.
func (c *Client) WatchEvents(ctx context.Context, ch <-chan event.Event, pd *PubData, o WatchOptions, yield func(MinionReturn) error) error {
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if o.Notice == nil {
		o.Notice = io.Discard
	}
	minions := newSet()
	found := newSet()
	missing := newSet()
	minionTimeouts := map[string]time.Time{}
	// pending counts the expected minions that have not returned, kept up
	// to date as the sets change (recounting per event was quadratic in
	// the number of minions); a minion's timeout starts when it becomes
	// pending.
	pending := 0
	addMinion := func(id string) {
		if minions.has[id] {
			return
		}
		minions.add(id)
		if !found.has[id] {
			pending++
			if _, ok := minionTimeouts[id]; !ok {
				minionTimeouts[id] = time.Now().Add(o.Timeout)
			}
		}
	}
	removeMinion := func(id string) {
		if minions.has[id] {
			minions.remove(id)
			if !found.has[id] {
				pending--
			}
		}
	}
	addFound := func(id string) {
		if !found.has[id] {
			found.add(id)
			if minions.has[id] {
				pending--
			}
		}
	}
	for _, id := range pd.Minions {
		addMinion(id)
	}
	timeoutAt := time.Now().Add(o.Timeout)
	running := true
	jinfoJID := ""
	handle := func(e event.Event) error {
		d := e.Data
		if d == nil {
			return nil
		}
		switch {
		case tagIsJob(e.Tag, pd.JID):
			if d.Has("error") {
				c.Logger.Debug("error event for the job", "tag", e.Tag)
			}
			if l, ok := d.Get("minions"); ok {
				for _, id := range stringList(asList(l)) {
					addMinion(id)
				}
				if ms, ok := d.Get("missing"); ok {
					for _, id := range stringList(asList(ms)) {
						missing.add(id)
					}
				}
				return nil
			}
			ret, ok := d.Get("return")
			if !ok {
				return nil
			}
			id := d.Str("id")
			addFound(id)
			data := payload.NewMap("ret", ret)
			for _, k := range []string{"out", "retcode", "jid"} {
				if v, ok := d.Get(k); ok {
					data.Set(k, v)
				}
			}
			return yield(MinionReturn{ID: id, Data: data})
		case tagIsJob(e.Tag, jinfoJID):
			id := d.Str("id")
			if rc, ok := d.Int("retcode"); ok && rc > 0 {
				c.Logger.Error("saltutil returning errors on minion " + id)
				removeMinion(id)
				return nil
			}
			if l, ok := d.Get("minions"); ok {
				for _, m := range stringList(asList(l)) {
					addMinion(m)
				}
				return nil
			}
			ret, ok := d.Get("return")
			if !ok {
				return nil
			}
			switch r := ret.(type) {
			case *payload.Map:
				if r.Len() == 0 {
					return nil
				}
				if inner, ok := r.Get("return"); ok {
					if im, isMap := inner.(*payload.Map); isMap && im.Len() == 0 {
						return nil
					}
				}
			case string, []byte:
				c.Logger.Error("unexpected return from minion", "id", id)
				return nil
			}
			addMinion(id)
			minionTimeouts[id] = time.Now().Add(o.Timeout)
			running = true
		}
		return nil
	}
	for {
		if pending == 0 {
			break
		}
		now := time.Now()
		if now.After(timeoutAt) && running {
			outstanding := minions.minus(found)
			tgt := make([]any, len(outstanding))
			for i, id := range outstanding {
				tgt[i] = id
			}
			c.Logger.Debug("checking whether the job is still running", "jid", pd.JID)
			jinfo, err := c.Publish(ctx, PubArgs{
				Tgt: tgt, Fun: "saltutil.find_job", Arg: []any{pd.JID}, TgtType: "list",
				Timeout: int(o.GatherJobTimeout / time.Second), Kwargs: o.FindJobKwargs,
			}, o.Notice)
			if err != nil {
				return err
			}
			running = false
			jinfoJID = ""
			if jinfo != nil {
				jinfoJID = jinfo.JID
				if o.Follow != nil {
					o.Follow(jinfoJID)
				}
			}
			timeoutAt = time.Now().Add(o.GatherJobTimeout)
		}
		now = time.Now()
		if now.After(timeoutAt) && !running {
			done := true
			for _, id := range minions.minus(found) {
				if now.Before(minionTimeouts[id]) {
					done = false
					break
				}
			}
			if done {
				break
			}
		}
		timer := time.NewTimer(o.Poll)
		select {
		case e, ok := <-ch:
			timer.Stop()
			if !ok {
				ch = nil
				continue
			}
			if err := handle(e); err != nil {
				return err
			}
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
	if o.ExpectMinions {
		for _, id := range minions.minus(found) {
			if err := yield(MinionReturn{ID: id, Failed: true}); err != nil {
				return err
			}
		}
	}
	for _, id := range missing.minus(found) {
		if err := yield(MinionReturn{ID: id, Failed: true}); err != nil {
			return err
		}
	}
	return nil
}

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case string:
		return []any{x}
	}
	return nil
}
