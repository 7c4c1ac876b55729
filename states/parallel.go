package states

import (
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// parallelProc is one state running in parallel (State.call_parallel's
// process): done closes when ret holds its result.
type parallelProc struct {
	done chan struct{}
	ret  *payload.Map
}

// startParallel is State.call_parallel: the state function runs on its own
// goroutine (Salt forks a process) and the run goes on with a placeholder
// result, "Started in a separate process", result None. Requisites on the
// state wait for it, and the run's end collects every result.
func (s *stateRun) startParallel(low *payload.Map, c *Call, res resolved, full string, lowName any) *payload.Map {
	var name any = c.Args.Get("name")
	if !payload.Truthy(name) {
		name = lowName
		if !payload.Truthy(name) {
			name, _ = low.Get("__id__")
		}
	}
	p := &parallelProc{done: make(chan struct{})}
	if s.procs == nil {
		s.procs = map[string]*parallelProc{}
	}
	s.procs[genTag(low)] = p
	retry, hasRetry := low.Get("retry")
	// The call sees a snapshot of the run, as Salt's forked process does,
	// so the run can go on changing its own maps.
	cc := *c
	cc.Low = payload.DeepClone(low).(*payload.Map)
	if c.Running != nil {
		cc.Running = payload.DeepClone(c.Running).(*payload.Map)
	}
	go func() {
		defer close(p.done)
		p.ret = s.runParallel(&cc, res, full, name, retry, hasRetry)
	}()
	return payload.NewMap("name", name, "result", nil, "changes", &payload.Map{}, "comment", "Started in a separate process")
}

// runParallel is State._call_parallel_target: the state call with its own
// start time and duration, __parallel__ set, and the retry loop.
func (s *stateRun) runParallel(c *Call, res resolved, full string, name, retry any, hasRetry bool) *payload.Map {
	once := func() *payload.Map {
		start := s.now()
		ret := s.callParallelOnce(c, res, full, name)
		end := s.now()
		ret.Set("start_time", localTime(start))
		ret.Set("duration", durationMS(end.Sub(start)))
		return ret
	}
	ret := once()
	ret.Set("__parallel__", true)
	if !hasRetry {
		return ret
	}
	rd := verifyRetryData(retry)
	attempts, _ := rd.Int("attempts")
	interval, _ := rd.Int("interval")
	splay, _ := rd.Int("splay")
	until, _ := rd.Get("until")
	if s.test {
		cs := ""
		if cm, _ := ret.Get("comment"); payload.Truthy(cm) {
			cs = pyStr(cm)
		}
		ret.Set("comment", cs+"  "+fmt.Sprintf("The state would be retried every %s seconds (with a splay of up to %s seconds) a maximum of %s times or until a result of %s is returned",
			pyStr(interval), pyStr(splay), pyStr(attempts), pyStr(until)))
		return ret
	}
	for retries := int64(1); attempts >= retries; retries++ {
		if r, _ := ret.Get("result"); r == until {
			break
		}
		wait := interval
		if splay > 0 {
			wait += rand.Int64N(splay + 1)
		}
		select {
		case <-s.ctx.Done():
			return ret
		case <-time.After(time.Duration(wait) * time.Second):
		}
		// As _call_parallel_target does: the retried call's own result
		// replaces the first (without __parallel__), its comment is
		// appended to the earlier one and its duration is taken after the
		// call (so about 0) plus the earlier one and the interval.
		orig := ret
		ret = s.callParallelOnce(c, res, full, name)
		ret.Set("duration", 0.0)
		nc := ""
		if cm, _ := ret.Get("comment"); payload.Truthy(cm) {
			r, _ := ret.Get("result")
			nc = fmt.Sprintf("Attempt %d: Returned a result of \"%s\", with the following comment: \"%s\"", retries, pyStr(r), pyStr(cm))
		}
		oc, _ := orig.Get("comment")
		ret.Set("comment", pyStr(oc)+"\n"+nc)
		d0, _ := orderValue(mapGetStr(orig, "duration"))
		ret.Set("duration", d0+float64(wait*1000))
		if retries == 1 {
			ret.Set("start_time", mapGetStr(orig, "start_time"))
		}
	}
	return ret
}

// callParallelOnce calls the state function once; an error or panic is
// Salt's "An exception occurred in this state" result.
func (s *stateRun) callParallelOnce(c *Call, res resolved, full string, name any) (ret *payload.Map) {
	defer func() {
		if p := recover(); p != nil {
			ret = payload.NewMap("result", false, "name", name, "changes", &payload.Map{},
				"comment", exceptionComment(full, fmt.Errorf("%v\n%s", p, debug.Stack())))
		}
	}()
	r, err := res.body(s.ctx, c)
	if err != nil {
		return payload.NewMap("result", false, "name", name, "changes", &payload.Map{}, "comment", exceptionComment(full, err))
	}
	return retMap(r, name)
}

// reconcile is State.reconcile_procs: the results of finished parallel
// states replace their placeholders in running (keys updated in place, new
// ones appended, as dict.update does). tags limits it to those states (nil:
// all); with wait it blocks until they finished.
func (s *stateRun) reconcile(running *payload.Map, tags []string, wait bool) {
	if len(s.procs) == 0 || running == nil {
		return
	}
	check := func(tag string) {
		p, ok := s.procs[tag]
		if !ok {
			return
		}
		cur, has := running.Get(tag)
		cm, isMap := asMap(cur)
		if !has || !isMap {
			return
		}
		if wait {
			select {
			case <-p.done:
			case <-s.ctx.Done():
				return
			}
		} else {
			select {
			case <-p.done:
			default:
				return
			}
		}
		if p.ret == nil {
			p.ret = payload.NewMap("result", false, "comment", "Parallel process failed to return",
				"name", mapGetStr(cm, "name"), "changes", &payload.Map{})
		}
		for _, it := range p.ret.Items() {
			cm.SetKey(it.Key, it.Value)
		}
		delete(s.procs, tag)
	}
	if tags == nil {
		for _, it := range running.Items() {
			if k, ok := it.Key.(string); ok {
				check(k)
			}
		}
		return
	}
	for _, t := range tags {
		check(t)
	}
}
