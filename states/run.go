package states

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxRecursion is Salt's limit on re-entering call_chunk for one chunk.
const maxRecursion = 20

// stateRun is one run of the state system: Salt's State object (the
// compiler and runner state of a single state.* call).
type stateRun struct {
	ctx   context.Context
	reg   *Registry
	env   *modules.Env
	opts  *runOpts
	rd    *render.Registry
	files render.FileSource
	log   *slog.Logger
	// test is opts["test"].
	test bool
	// mocked is mock=True: states are not called.
	mocked bool
	runNum int
	active map[string]bool
	// pre holds the test-mode results of prereq runs (self.pre).
	pre *payload.Map
	// failhardHit is Salt's running["__FAILHARD__"].
	failhardHit bool
	// abort is an error that ends the whole run, as a Python exception
	// escaping the state system would.
	abort error
	// jid is the job id of the run ("" for none), used in event tags.
	jid     string
	gsc     *payload.Map
	gscRead bool
	// inited holds the state modules whose mod_init ran (and returned
	// true) in this run.
	inited  map[string]bool
	matcher *target.Matcher
	now     func() time.Time
	// procs are the states running in parallel (parallel: True), by tag,
	// until their result replaces the placeholder in running.
	procs map[string]*parallelProc
	// accum is the run's file.accumulated data.
	accum Accumulators
}

// newStateRun returns a runner over env.
func newStateRun(ctx context.Context, reg *Registry, env *modules.Env, opts *runOpts, rd *render.Registry, files render.FileSource) *stateRun {
	log := slog.Default()
	if env != nil && env.Log != nil {
		log = env.Log
	}
	return &stateRun{
		ctx: ctx, reg: reg, env: env, opts: opts, rd: rd, files: files, log: log,
		active: map[string]bool{}, pre: &payload.Map{},
		matcher: target.New(target.Options{Logger: log}), now: time.Now,
	}
}

// reqSet is the requisite chunks found by checkRequisite, by type, in
// Salt's order.
type reqSet struct {
	keys []string
	m    map[string][]*payload.Map
}

func (r *reqSet) add(kind string, c *payload.Map) {
	if r.m == nil {
		r.m = map[string][]*payload.Map{}
	}
	if _, ok := r.m[kind]; !ok {
		r.keys = append(r.keys, kind)
	}
	r.m[kind] = append(r.m[kind], c)
}

// hasFun reports whether a state function (or a module-level function such
// as "cmd.mod_run_check") is registered.
func (s *stateRun) hasFun(full string) bool {
	if s.reg == nil {
		return false
	}
	_, ok := s.reg.Lookup(full)
	return ok
}

// hasModWatch reports whether low's state has a mod_watch: a registered
// "<state>.mod_watch" or a Watch on the function itself.
func (s *stateRun) hasModWatch(low *payload.Map) bool {
	state := getStr(low, "state")
	if s.hasFun(state + ".mod_watch") {
		return true
	}
	fun := getStr(low, "fun")
	if fun == "mod_watch" {
		fun = getStr(low, "sfun")
	}
	if s.reg == nil {
		return false
	}
	fn, ok := s.reg.Lookup(state + "." + fun)
	return ok && fn.Watch != nil
}

// missingFunString says why state function full is missing.
func (s *stateRun) missingFunString(full string) string {
	if s.reg == nil {
		return fmt.Sprintf("'%s' is not available.", full)
	}
	return s.reg.MissingFunString(full, s.execRegistry(), s.env)
}

// execRegistry is the minion's execution functions (nil when unknown).
func (s *stateRun) execRegistry() *modules.Registry {
	if s.env == nil {
		return nil
	}
	return s.env.Registry
}

// resolved is the Go function a low chunk calls.
type resolved struct {
	fn    *Function
	body  Func
	spec  modules.Spec
	watch bool
}

// resolve finds the function for low ("mod_watch" maps to the registered
// "<state>.mod_watch" or to the watched function's Watch).
func (s *stateRun) resolve(low *payload.Map) (resolved, bool) {
	if s.reg == nil {
		return resolved{}, false
	}
	state, fun := getStr(low, "state"), getStr(low, "fun")
	if _, refused := s.reg.Refused(state, s.execRegistry(), s.env); refused {
		return resolved{}, false
	}
	if fn, ok := s.reg.Lookup(state + "." + fun); ok {
		return resolved{fn: fn, body: fn.Fn, spec: fn.Spec, watch: fun == "mod_watch"}, true
	}
	if fun == "mod_watch" {
		if fn, ok := s.reg.Lookup(state + "." + getStr(low, "sfun")); ok && fn.Watch != nil {
			spec := fn.Spec
			spec.Kwargs = true
			return resolved{fn: fn, body: fn.Watch, spec: spec, watch: true}, true
		}
	}
	return resolved{}, false
}

// disabledReqs is opts disabled_requisites as a list.
func (s *stateRun) disabledReqs() []string {
	v, ok := s.opts.Get("disabled_requisites")
	if !ok || v == nil {
		return nil
	}
	var out []string
	if l, ok := v.([]any); ok {
		for _, e := range l {
			out = append(out, pyStr(e))
		}
		return out
	}
	return []string{pyStr(v)}
}

// callHigh is State.call_high: compile high data and run it. It returns a
// *payload.Map (the running dict) or a []string of errors.
func (s *stateRun) callHigh(high *payload.Map, orchestrationJID any) (any, error) {
	injectDefaultCall(high)
	errs := reconcileExtend(high, false)
	errs = append(errs, verifyHigh(high)...)
	if len(errs) > 0 {
		return errs, nil
	}
	errs = requisiteIn(high, s.disabledReqs(), s.log)
	applyExclude(high)
	if len(errs) > 0 {
		return errs, nil
	}
	chunks := compileHighData(high, orchestrationJID)
	ret := s.callChunks(chunks)
	if s.abort != nil {
		return nil, s.abort
	}
	ret = s.callListen(chunks, ret)
	if s.abort != nil {
		return nil, s.abort
	}
	ret = s.callBeacons(chunks, ret)
	if s.abort != nil {
		return nil, s.abort
	}
	return ret, nil
}

// callBeacons is State.call_beacons: every chunk with a beacon argument
// runs its state module's mod_beacon after the run (ID beacon_<id>, sfun
// the chunk's function), which adds a beacon watching what the state
// manages (file.managed: inotify, service.running: service).
func (s *stateRun) callBeacons(chunks []*payload.Map, running *payload.Map) *payload.Map {
	var mods []*payload.Map
	for _, c := range chunks {
		if !c.Has("beacon") {
			continue
		}
		low := c.Clone()
		fun, _ := c.Get("fun")
		low.Set("sfun", fun)
		low.Set("fun", "mod_beacon")
		low.Set("__id__", "beacon_"+pyStr(mapGetStr(c, "__id__")))
		mods = append(mods, low)
	}
	if len(mods) == 0 {
		return running
	}
	for _, it := range s.callChunks(mods).Items() {
		running.SetKey(it.Key, it.Value)
	}
	return running
}

// fakeTimes is _calculate_fake_duration: now and a near-zero duration.
func (s *stateRun) fakeTimes() (string, float64) {
	t0 := s.now()
	d := s.now().Sub(t0)
	return localTime(t0), durationMS(d)
}

// callChunks is State.call_chunks.
func (s *stateRun) callChunks(chunks []*payload.Map) *payload.Map {
	disabled := &payload.Map{}
	if pats, ok := s.grain("state_runs_disabled"); ok {
		var kept []*payload.Map
		for _, low := range chunks {
			full := getStr(low, "state") + "." + getStr(low, "fun")
			off := false
			for _, p := range listOf(pats) {
				pat := pyStr(p)
				if fnmatch(full, pat) {
					disabled.Set(genTag(low), payload.NewMap(
						"changes", &payload.Map{}, "result", false,
						"comment", fmt.Sprintf("The state function \"%s\" is currently disabled by \"%s\", to re-enable, run state.enable %s.", full, pat, pat),
						"__run_num__", int64(s.runNum), "__sls__", mapGetStr(low, "__sls__")))
					s.runNum++
					off = true
					break
				}
			}
			if !off {
				kept = append(kept, low)
			}
		}
		chunks = kept
	}
	running := &payload.Map{}
	s.failhardHit = false
	for _, low := range chunks {
		if s.failhardHit {
			s.failhardHit = false
			return running
		}
		if s.ctx.Err() != nil {
			s.abort = s.ctx.Err()
			return running
		}
		tag := genTag(low)
		if !running.Has(tag) {
			s.callChunk(low, running, chunks, 0)
			if s.abort != nil {
				return running
			}
			if s.checkFailhard(low, running) {
				return running
			}
		}
		s.active = map[string]bool{}
	}
	s.failhardHit = false
	s.reconcile(running, nil, true)
	if disabled.Len() == 0 {
		return running
	}
	for _, it := range running.Items() {
		disabled.SetKey(it.Key, it.Value)
	}
	return disabled
}

// grain returns a grain value.
func (s *stateRun) grain(key string) (any, bool) {
	if s.env == nil || s.env.Grains == nil {
		return nil, false
	}
	return s.env.Grains.Get(key)
}

// checkFailhard is State.check_failhard.
func (s *stateRun) checkFailhard(low, running *payload.Map) bool {
	if s.test {
		return false
	}
	fh, ok := low.Get("failhard")
	if !ok {
		fh, _ = s.opts.Get("failhard")
	}
	tag := genTag(low)
	r, ok := running.Get(tag)
	if !payload.Truthy(fh) || !ok {
		return false
	}
	rm, _ := asMap(r)
	res, _ := rm.Get("result")
	if res == nil {
		return false
	}
	return !payload.Truthy(res)
}

// requisite types checkRequisite looks at, in Salt's order.
var checkReqTypes = []string{"require", "require_any", "watch", "watch_any", "prereq", "onfail", "onfail_any", "onfail_all", "onchanges", "onchanges_any"}

// watchToRequire turns watch (or watch_any) into require (require_any)
// when the state has no mod_watch; it reports whether the watch stays.
func (s *stateRun) watchToRequire(low *payload.Map, watch, require string) (present bool) {
	if !low.Has(watch) {
		return false
	}
	if s.hasModWatch(low) {
		return true
	}
	w, _ := low.Delete(watch)
	if cur, ok := low.Get(require); ok {
		low.Set(require, append(append([]any(nil), listOf(cur)...), listOf(w)...))
	} else {
		low.Set(require, w)
	}
	return false
}

// reqMatches reports whether chunk is the target of the requisite
// (key, val): by SLS glob, or by name/ID glob and state (or any state for
// "id").
func reqMatches(chunk *payload.Map, key string, val any) bool {
	if key == "sls" {
		return fnmatch(getStr(chunk, "__sls__"), pyStr(val))
	}
	v := pyStr(val)
	if fnmatch(getStr(chunk, "name"), v) || fnmatch(getStr(chunk, "__id__"), v) {
		return key == "id" || getStr(chunk, "state") == key
	}
	return false
}

// checkRequisite is State.check_requisite: the status of low's requisites
// ("met", "unmet", "fail", "change", "pre", "onfail", "onchanges").
func (s *stateRun) checkRequisite(low, running *payload.Map, chunks []*payload.Map, pre bool) (string, reqSet) {
	disabled := s.disabledReqs()
	present := s.watchToRequire(low, "watch", "require")
	if s.watchToRequire(low, "watch_any", "require_any") {
		present = true
	}
	for _, k := range []string{"require", "require_any", "prerequired", "prereq", "onfail", "onfail_any", "onfail_all", "onchanges", "onchanges_any"} {
		if low.Has(k) {
			present = true
		}
	}
	if !present {
		return "met", reqSet{}
	}
	kinds := append([]string(nil), checkReqTypes...)
	if pre {
		kinds = append(kinds, "prerequired")
	}
	var reqs reqSet
	for _, k := range kinds {
		reqs.add(k, nil)
		reqs.m[k] = nil
	}
	for _, rstate := range kinds {
		v, ok := low.Get(rstate)
		if !ok || v == nil {
			continue
		}
		if containsStr(disabled, rstate) {
			s.log.Warn(fmt.Sprintf("The %s requisite has been disabled, Ignoring.", rstate))
			continue
		}
		for _, req := range listOf(v) {
			key, val, ok := reqPair(req)
			if !ok || val == nil {
				continue
			}
			found := false
			for _, chunk := range chunks {
				if key != "sls" {
					if _, isStr := val.(string); !isStr {
						s.abort = fmt.Errorf("%w: Could not locate requisite of [%s] present in state with name [%s]", modules.ErrExecution, key, getStr(chunk, "name"))
						return "unmet", reqs
					}
				}
				if reqMatches(chunk, key, val) {
					found = true
					reqs.m[rstate] = append(reqs.m[rstate], chunk)
				}
			}
			if !found {
				return "unmet", reqSet{}
			}
		}
	}
	funStats := map[string]bool{}
	s.reconcile(running, nil, false)
	for _, rstate := range reqs.keys {
		rchunks := reqs.m[rstate]
		stats := map[string]bool{}
		runDict := running
		if strings.HasPrefix(rstate, "prereq") && !strings.HasPrefix(rstate, "prerequired") {
			runDict = s.pre
		}
		// A required state running in parallel is waited for.
		tags := make([]string, len(rchunks))
		for i, chunk := range rchunks {
			tags[i] = genTag(chunk)
		}
		s.reconcile(runDict, tags, true)
		for _, chunk := range rchunks {
			rv, ok := runDict.Get(genTag(chunk))
			r, _ := asMap(rv)
			if !ok || r == nil {
				stats["unmet"] = true
				continue
			}
			result, _ := r.Get("result")
			if strings.HasPrefix(rstate, "onfail") {
				if result == true {
					stats["onfail"] = true
					continue
				}
			} else if result == false {
				stats["fail"] = true
				continue
			}
			changes, _ := r.Get("changes")
			if strings.HasPrefix(rstate, "onchanges") {
				if !payload.Truthy(changes) {
					stats["onchanges"] = true
				} else {
					stats["onchangesmet"] = true
				}
				continue
			}
			if strings.HasPrefix(rstate, "watch") && payload.Truthy(changes) {
				stats["change"] = true
				continue
			}
			isPrereq := strings.HasPrefix(rstate, "prereq")
			isPrerequired := strings.HasPrefix(rstate, "prerequired")
			if isPrereq && result == nil && !isPrerequired {
				stats["premet"] = true
			}
			if isPrereq && result != nil {
				if !isPrerequired {
					stats["pre"] = true
				}
			} else {
				ran, has := r.Get("__state_ran__")
				if !has || payload.Truthy(ran) {
					stats["met"] = true
				}
			}
		}
		if strings.HasSuffix(rstate, "_any") || rstate == "onfail" {
			if stats["met"] || stats["change"] {
				delete(stats, "fail")
			}
			if stats["onchangesmet"] {
				delete(stats, "onchanges")
				delete(stats, "fail")
			}
			if stats["onfail"] && stats["met"] {
				delete(stats, "onfail")
			}
		}
		if strings.HasSuffix(rstate, "_all") && stats["onfail"] && stats["met"] {
			delete(stats, "met")
		}
		for k := range stats {
			funStats[k] = true
		}
	}
	var status string
	switch {
	case funStats["unmet"]:
		status = "unmet"
	case funStats["fail"]:
		status = "fail"
	case funStats["pre"]:
		if funStats["premet"] {
			status = "met"
		} else {
			status = "pre"
		}
	case funStats["onfail"] && !funStats["onchangesmet"]:
		status = "onfail"
	case funStats["onchanges"] && !funStats["onchangesmet"]:
		status = "onchanges"
	case funStats["change"]:
		status = "change"
	case funStats["onfail"]:
		status = "onfail"
	default:
		status = "met"
	}
	return status, reqs
}

// addLowKeys sets __sls__, __id__ and name from low, as Salt's
// "for key in ('__sls__', '__id__', 'name')" loops do.
func addLowKeys(ret, low *payload.Map) {
	for _, k := range []string{"__sls__", "__id__", "name"} {
		v, _ := low.Get(k)
		ret.Set(k, v)
	}
}

// callChunkRequisites are the requisite types call_chunk resolves.
var callChunkRequisites = []string{"require", "require_any", "watch", "watch_any", "prereq", "onfail", "onfail_any", "onchanges", "onchanges_any"}

// callChunk is State.call_chunk: run low's requisites, then low.
func (s *stateRun) callChunk(low, running *payload.Map, chunks []*payload.Map, depth int) {
	s.modAggregate(low, running, chunks)
	s.modInit(low)
	tag := genTag(low)
	if !low.Bool("prerequired") {
		s.active[tag] = true
	}
	requisites := append([]string(nil), callChunkRequisites...)
	var status string
	var reqs reqSet
	isPrereq := low.Bool("__prereq__")
	if !isPrereq {
		requisites = append(requisites, "prerequired")
		status, reqs = s.checkRequisite(low, running, chunks, true)
	} else {
		status, reqs = s.checkRequisite(low, running, chunks, false)
	}
	if s.abort != nil {
		return
	}
	switch {
	case status == "unmet":
		type lostReq struct{ key, val string }
		lost := map[string][]lostReq{}
		var reqChunks []*payload.Map
		var lastChunk *payload.Map
		for _, requisite := range requisites {
			v, ok := low.Get(requisite)
			if !ok {
				continue
			}
			for _, req := range listOf(v) {
				key, val, ok := reqPair(req)
				if !ok {
					continue
				}
				found := false
				for _, chunk := range chunks {
					lastChunk = chunk
					if val == nil {
						continue
					}
					if reqMatches(chunk, key, val) {
						if requisite == "prereq" {
							chunk.Set("__prereq__", true)
						} else if requisite == "prerequired" && key != "sls" {
							chunk.Set("__prerequired__", true)
						}
						reqChunks = append(reqChunks, chunk)
						found = true
					}
				}
				if !found {
					lost[requisite] = append(lost[requisite], lostReq{key, pyStr(val)})
				}
			}
		}
		if len(lost) > 0 {
			comment := "The following requisites were not found:\n"
			for _, requisite := range requisites {
				if len(lost[requisite]) == 0 {
					continue
				}
				comment += strings.Repeat(" ", 19) + requisite + ":\n"
				for _, l := range lost[requisite] {
					comment += strings.Repeat(" ", 23) + l.key + ": " + l.val + "\n"
				}
			}
			runDict := running
			if isPrereq {
				runDict = s.pre
			}
			st, dur := s.fakeTimes()
			r := payload.NewMap("changes", &payload.Map{}, "result", false, "duration", dur, "start_time", st, "comment", comment, "__run_num__", int64(s.runNum))
			addLowKeys(r, low)
			runDict.Set(tag, r)
			s.runNum++
			s.event(r, len(chunks), mapGetStr(low, "fire_event"))
			return
		}
		for _, chunk := range reqChunks {
			lastChunk = chunk
			ctag := genTag(chunk)
			if running.Has(ctag) {
				continue
			}
			if s.active[ctag] {
				if chunk.Bool("__prerequired__") {
					if !s.pre.Has(tag) {
						low.Set("__prereq__", true)
						s.pre.Set(ctag, s.call(low, chunks, running, reqSet{}, 1))
					}
					return
				}
				r := payload.NewMap("changes", &payload.Map{}, "result", false, "comment", "Recursive requisite found", "__run_num__", int64(s.runNum))
				addLowKeys(r, low)
				running.Set(tag, r)
				s.log.Error("Recursive requisite found")
				s.runNum++
				s.event(r, len(chunks), mapGetStr(low, "fire_event"))
				return
			}
			s.callChunk(chunk, running, chunks, 0)
			if s.abort != nil {
				return
			}
			if s.checkFailhard(chunk, running) {
				s.failhardHit = true
				return
			}
		}
		if low.Bool("__prereq__") {
			st, _ := s.checkRequisite(low, running, chunks, false)
			r := s.call(low, chunks, running, reqSet{}, 1)
			s.pre.Set(tag, r)
			if ch, _ := r.Get("changes"); !payload.Truthy(ch) && st == "change" {
				r.Set("changes", payload.NewMap("watch", "watch"))
				r.Set("result", nil)
			}
		} else {
			depth++
			if depth >= maxRecursion {
				s.log.Error("Recursive requisite found")
				r := payload.NewMap("changes", &payload.Map{}, "result", false, "comment", "Recursive requisite found", "__run_num__", int64(s.runNum))
				addLowKeys(r, low)
				running.Set(tag, r)
			} else {
				s.callChunk(low, running, chunks, depth)
			}
		}
		if lastChunk != nil && s.checkFailhard(lastChunk, running) {
			s.failhardHit = true
			return
		}
	case status == "met":
		if isPrereq {
			s.pre.Set(tag, s.call(low, chunks, running, reqSet{}, 1))
		} else {
			running.Set(tag, s.call(low, chunks, running, reqSet{}, 1))
		}
	case status == "fail":
		if pv, ok := s.pre.Get(tag); ok {
			p, _ := asMap(pv)
			if p == nil {
				p = &payload.Map{}
			}
			if ch, _ := p.Get("changes"); payload.Truthy(ch) {
				p.Set("changes", &payload.Map{})
			}
			p.Set("__run_num__", int64(s.runNum))
			addLowKeys(p, low)
			running.Set(tag, p)
		} else {
			var failed []string
			seen := map[string]bool{}
			for _, k := range reqs.keys {
				for _, rl := range reqs.m[k] {
					rtag := genTag(rl)
					rv, ok := s.pre.Get(rtag)
					if !ok {
						rv, ok = running.Get(rtag)
					}
					rm, _ := asMap(rv)
					if !ok || rm == nil {
						continue
					}
					if res, _ := rm.Get("result"); res == false {
						key := getStr(rl, "__sls__") + "." + getStr(rl, "__id__")
						if !seen[key] {
							seen[key] = true
							failed = append(failed, key)
						}
					}
				}
			}
			st, dur := s.fakeTimes()
			r := payload.NewMap("changes", &payload.Map{}, "result", false, "duration", dur, "start_time", st,
				"comment", "One or more requisite failed: "+strings.Join(failed, ", "), "__run_num__", int64(s.runNum))
			addLowKeys(r, low)
			running.Set(tag, r)
			s.pre.Set(tag, r)
		}
		s.runNum++
	case status == "change" && !isPrereq:
		ret := s.call(low, chunks, running, reqSet{}, 1)
		if s.abort != nil {
			return
		}
		ch, _ := ret.Get("changes")
		sw, _ := ret.Get("skip_watch")
		if !payload.Truthy(ch) && !payload.Truthy(sw) {
			wl := low.Clone()
			wl.Set("sfun", mapGetStr(low, "fun"))
			wl.Set("fun", "mod_watch")
			ret = s.call(wl, chunks, running, reqs, 1)
		}
		running.Set(tag, ret)
	case status == "pre":
		st, dur := s.fakeTimes()
		r := payload.NewMap("changes", &payload.Map{}, "result", true, "duration", dur, "start_time", st, "comment", "No changes detected", "__run_num__", int64(s.runNum))
		addLowKeys(r, low)
		running.Set(tag, r)
		s.pre.Set(tag, r)
		s.runNum++
	case status == "onfail" || status == "onchanges":
		comment := "State was not run because onfail req did not change"
		if status == "onchanges" {
			comment = "State was not run because none of the onchanges reqs changed"
		}
		st, dur := s.fakeTimes()
		r := payload.NewMap("changes", &payload.Map{}, "result", true, "duration", dur, "start_time", st, "comment", comment, "__state_ran__", false, "__run_num__", int64(s.runNum))
		addLowKeys(r, low)
		running.Set(tag, r)
		s.runNum++
	default:
		if isPrereq {
			s.pre.Set(tag, s.call(low, chunks, running, reqSet{}, 1))
		} else {
			running.Set(tag, s.call(low, chunks, running, reqSet{}, 1))
		}
	}
	if r, ok := running.Get(tag); ok {
		if rm, ok := asMap(r); ok {
			s.event(rm, len(chunks), mapGetStr(low, "fire_event"))
		}
	}
}

// tagify is salt.utils.event.tagify: "salt/<prefix>/<parts...>", empty
// parts dropped.
func tagify(prefix string, parts ...string) string {
	out := []string{"salt"}
	for _, p := range append([]string{prefix}, parts...) {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// event is State.event: with state_events (or a state's fire_event) and
// a master connection, send the chunk's result to the master bus through
// event.fire_master.
func (s *stateRun) event(ret *payload.Map, length int, fireEvent any) {
	if s.opts.boolDefault("local", false) {
		return
	}
	if !s.opts.boolDefault("state_events", false) && !payload.Truthy(fireEvent) {
		return
	}
	if s.env == nil || s.env.Registry == nil {
		return
	}
	if _, ok := s.env.Registry.Lookup("event.fire_master"); !ok {
		return
	}
	jid := s.jid
	if jid == "" {
		jid = "None"
	}
	id := s.env.ID
	data := payload.NewMap("ret", ret)
	var tag string
	if fireEvent == true {
		tag = tagify("state_result", jid, id, getStr(ret, "name"))
	} else if str, ok := fireEvent.(string); ok {
		tag = tagify("state_result", jid, id, str)
	} else {
		tag = tagify("job", jid, "prog", id, getStr(ret, "__run_num__"))
		data.Set("len", int64(length))
	}
	preload := payload.NewMap("__kwarg__", true, "preload", payload.NewMap("jid", jid))
	res := s.env.Registry.Execute(s.ctx, modules.Binder{}, s.env, "event.fire_master", []any{data, tag, preload}, nil)
	if res.Retcode != 0 {
		s.log.Debug("state event not sent", "tag", tag, "return", pyStr(res.Return))
	}
}

// verifyData is State.verify_data: errors that keep a chunk from running.
func (s *stateRun) verifyData(data *payload.Map) []string {
	var errs []string
	for _, k := range []string{"state", "fun", "name"} {
		if !data.Has(k) {
			errs = append(errs, fmt.Sprintf("Missing \"%s\" data", k))
		}
	}
	if !data.Has("name") {
		return errs
	}
	name, _ := data.Get("name")
	if _, isStr := name.(string); payload.Truthy(name) && !isStr {
		in := ""
		if data.Has("__sls__") {
			in = fmt.Sprintf("in SLS '%s' ", getStr(data, "__sls__"))
		}
		errs = append(errs, fmt.Sprintf("ID '%s' %sis not formed as a string, but is a %s", pyStr(name), in, pyType(name)))
	}
	if um, ok := data.Delete("umask"); ok {
		n, err := parseOctal(pyStr(um))
		if err != nil {
			errs = append(errs, fmt.Sprintf("Invalid umask: %s", pyStr(um)))
		} else {
			data.Set("__umask__", n)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	full := getStr(data, "state") + "." + getStr(data, "fun")
	r, ok := s.resolve(data)
	if !ok {
		if data.Has("__sls__") {
			errs = append(errs, fmt.Sprintf("State '%s' was not found in SLS '%s'", full, getStr(data, "__sls__")),
				"Reason: "+s.missingFunString(full))
		} else {
			errs = append(errs, fmt.Sprintf("Specified state '%s' was not found", full))
		}
	} else if !r.watch {
		for _, p := range r.spec.Params {
			if p.Required && !data.Has(p.Name) {
				errs = append(errs, fmt.Sprintf("Missing parameter %s for state %s", p.Name, full))
			}
		}
	}
	reqdec := ""
	if data.Has("require") {
		reqdec = "require"
	}
	if data.Has("watch") {
		if s.watchToRequire(data, "watch", "require") {
			reqdec = "watch"
		} else {
			reqdec = "require"
		}
	}
	if reqdec != "" {
		state := getStr(data, "state")
		for _, req := range listOf(mapGetStr(data, reqdec)) {
			rm, ok := asMap(req)
			if !ok || rm.Len() == 0 {
				continue
			}
			k, v, _ := firstItem(rm)
			if keyText(k) != state {
				continue
			}
			if fnmatch(getStr(data, "name"), pyStr(v)) || fnmatch(getStr(data, "__id__"), pyStr(v)) {
				errs = append(errs, fmt.Sprintf("Recursive require detected in SLS %s for require %s in ID %s", getStr(data, "__sls__"), pyStr(rm), getStr(data, "__id__")))
			}
		}
	}
	return errs
}

// parseOctal is int(str(umask), 8).
func parseOctal(s string) (int64, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	if s == "" {
		return 0, errors.New("empty")
	}
	var n int64
	for _, r := range s {
		if r < '0' || r > '7' {
			return 0, errors.New("not octal")
		}
		n = n*8 + int64(r-'0')
		if n > 1<<40 {
			return 0, errors.New("too large")
		}
	}
	return n, nil
}

// bindLow is salt.utils.args.format_call for a state function: parameters
// take their low-chunk values, other keys go to **kwargs unless they are
// the state system's own keywords; a function without **kwargs given
// unknown keys is a SaltInvocationError.
func bindLow(spec modules.Spec, low *payload.Map, full string) (*modules.Args, error) {
	kw, err := lowKwargs(spec, low, full)
	if err != nil {
		return nil, err
	}
	return modules.BindKeywords(spec, kw)
}

// lowKwargs selects the low-chunk keys format_call passes to a function.
func lowKwargs(spec modules.Spec, low *payload.Map, full string) (*payload.Map, error) {
	params := make(map[string]bool, len(spec.Params))
	for _, p := range spec.Params {
		params[p.Name] = true
	}
	kw := &payload.Map{}
	var extra []string
	for _, it := range low.Items() {
		k := keyText(it.Key)
		switch {
		case params[k]:
			kw.Set(k, it.Value)
		case internalKeywords[k]:
		case spec.Kwargs:
			kw.Set(k, it.Value)
		default:
			extra = append(extra, k)
		}
	}
	switch len(extra) {
	case 0:
	case 1:
		return nil, fmt.Errorf("%w: '%s' is an invalid keyword argument for '%s'", modules.ErrInvocation, extra[0], full)
	default:
		q := make([]string, len(extra)-1)
		for i, e := range extra[:len(extra)-1] {
			q[i] = "'" + e + "'"
		}
		return nil, fmt.Errorf("%w: %s and '%s' are invalid keyword arguments for '%s'", modules.ErrInvocation, strings.Join(q, ", "), extra[len(extra)-1], full)
	}
	return kw, nil
}

// hasSlots reports whether any value (or first-level member) is a slot.
func hasSlots(kw *payload.Map) bool {
	for _, it := range kw.Items() {
		switch v := it.Value.(type) {
		case string:
			if _, ok := isSlot(v); ok {
				return true
			}
		case *payload.Map, []any:
			if strings.Contains(jsonish(v), slotPrefix) {
				return true
			}
		}
	}
	return false
}

// jsonish renders a value for a cheap substring check.
func jsonish(v any) string { return pyRepr(v) }

// retMap converts a Go Ret into Salt's ret dict.
func retMap(r Ret, lowName any) *payload.Map {
	var name any = r.Name
	if r.Name == "" {
		name = lowName
	}
	ch := r.Changes
	if ch == nil {
		ch = &payload.Map{}
	}
	m := payload.NewMap("name", name, "changes", ch, "result", r.Result.Value(), "comment", r.Comment)
	if len(r.Warnings) > 0 {
		w := make([]any, len(r.Warnings))
		for i, s := range r.Warnings {
			w[i] = s
		}
		m.Set("warnings", w)
	}
	if r.Extra != nil {
		for _, it := range r.Extra.Items() {
			if !m.Has(payload.KeyString(it.Key)) {
				m.SetKey(it.Key, it.Value)
			}
		}
	}
	return m
}

// unify is OutputUnifier's unify policy: a list comment is joined with
// newlines, a non-None result becomes a bool.
func unify(ret *payload.Map) {
	if c, ok := ret.Get("comment"); ok {
		if l, isList := c.([]any); isList {
			parts := make([]string, len(l))
			for i, e := range l {
				parts[i] = pyStr(e)
			}
			ret.Set("comment", strings.Join(parts, "\n"))
		}
	}
	if r, ok := ret.Get("result"); ok && r != nil {
		ret.Set("result", payload.Truthy(r))
	}
}

// saltenvOf is the __env__ a state function sees.
func (s *stateRun) saltenvOf(low *payload.Map, args *modules.Args) string {
	env := ""
	if v, ok := low.Get("__env__"); ok {
		env = pyStr(v)
	}
	if !boolOpt(s.optGet("lock_saltenv")) {
		if v, ok := low.Get("saltenv"); ok {
			env = pyStr(v)
		} else if args != nil {
			if v, ok := args.Get("env").(string); ok && args.Given("env") {
				env = v
			}
		}
	}
	if env == "" {
		env = "base"
	}
	return env
}

func (s *stateRun) optGet(key string) any {
	v, _ := s.opts.Get(key)
	return v
}

// call is State.call: verify low, run the global checks (onlyif, unless,
// creates), call the state function and add the bookkeeping keys.
func (s *stateRun) call(low *payload.Map, chunks []*payload.Map, running *payload.Map, reqs reqSet, retries int) *payload.Map {
	start := s.now()
	lowName, _ := low.Get("name")
	if errs := s.verifyData(low); len(errs) > 0 {
		comment := ""
		for _, e := range errs {
			comment += e + "\n"
		}
		ret := payload.NewMap("result", false, "name", lowName, "changes", &payload.Map{}, "comment", comment, "__run_num__", int64(s.runNum))
		s.runNum++
		return ret
	}
	ret := payload.NewMap("result", false, "name", lowName, "changes", &payload.Map{})
	res, _ := s.resolve(low)
	state, fun := getStr(low, "state"), getStr(low, "fun")
	full := state + "." + fun
	args, err := bindLow(res.spec, low, full)
	if err != nil {
		s.abort = err
		return ret
	}
	prereq := low.Bool("__prereq__")
	var exc error
	func() {
		defer func() {
			if p := recover(); p != nil {
				exc = fmt.Errorf("%v\n%s", p, debug.Stack())
			}
		}()
		if (low.Has("unless") || low.Has("onlyif") || low.Has("creates")) && !s.hasFun(state+".mod_run_check") {
			chk, err := s.runCheck(low)
			if err != nil {
				exc = err
				return
			}
			for _, it := range chk.Items() {
				ret.SetKey(it.Key, it.Value)
			}
		}
		if r, ok := ret.Get("result"); !ok || r == false {
			switch {
			case s.mocked:
				var n any = args.Get("name")
				if n == nil {
					n = lowName
				}
				ret = payload.NewMap("name", n, "comment", "Not called, mocked", "changes", &payload.Map{}, "result", true)
			default:
				if gc := s.globalConditions(full, state, lowName); gc != nil {
					ret = gc
					break
				}
				fname := fun
				if res.watch && fun == "mod_watch" && res.fn != nil && !strings.HasSuffix(res.fn.Name, ".mod_watch") {
					fname = getStr(low, "sfun")
				}
				c := &Call{
					ID: getStr(low, "__id__"), Name: pyStr(lowName), State: state, Fun: fname,
					Args: args, Low: low, Test: s.test || prereq, Saltenv: s.saltenvOf(low, args),
					Env: s.env, Render: s.rd, Files: s.files, Watch: res.watch,
					Running: running, Chunks: chunks, Accum: &s.accum,
				}
				if sls, ok := low.Get("__sls__"); ok && sls != nil {
					c.SLS = pyStr(sls)
				}
				if res.watch && reqs.m != nil {
					c.Reqs = map[string][]*payload.Map{}
					for _, k := range reqs.keys {
						c.Reqs[k] = reqs.m[k]
					}
				}
				if kw, _ := lowKwargs(res.spec, low, full); kw != nil && hasSlots(kw) {
					if err := s.formatSlots(kw); err != nil {
						exc = err
						return
					}
					a, err := modules.BindKeywords(res.spec, kw)
					if err != nil {
						exc = err
						return
					}
					c.Args = a
				}
				if !prereq && payload.Truthy(mapGetStr(low, "parallel")) {
					ret = s.startParallel(low, c, res, full, lowName)
				} else {
					r, err := res.body(s.ctx, c)
					if err != nil {
						exc = err
						return
					}
					ret = retMap(r, lowName)
				}
			}
		}
		if low.Has("check_cmd") {
			hasParam := false
			for _, p := range res.spec.Params {
				if p.Name == "check_cmd" {
					hasParam = true
				}
			}
			if !s.hasFun(state+".mod_run_check_cmd") || !hasParam {
				chk, err := s.runCheckCmd(low)
				if err != nil {
					exc = err
					return
				}
				for _, it := range chk.Items() {
					ret.SetKey(it.Key, it.Value)
				}
			}
		}
	}()
	if exc != nil {
		s.log.Debug("An exception occurred in this state", "state", full, "err", exc)
		var name any = args.Get("name")
		if !payload.Truthy(name) {
			name = lowName
			if !payload.Truthy(name) {
				name, _ = low.Get("__id__")
			}
		}
		ret = payload.NewMap("result", false, "name", name, "changes", &payload.Map{}, "comment", exceptionComment(full, exc))
	}
	// State.call is wrapped in OutputUnifier: its return is unified when
	// it returns, after the retry handling below has read the raw comment
	// (a list from the onlyif/unless checks is str()'d into a test=True
	// retry comment, "['onlyif condition is false']  The state would be
	// retried ...")
	if prereq {
		unify(ret)
		low.Set("__prereq__", false)
		return ret
	}
	sls, _ := low.Get("__sls__")
	ret.Set("__sls__", sls)
	ret.Set("__run_num__", int64(s.runNum))
	s.runNum++
	end := s.now()
	ret.Set("start_time", localTime(start))
	ret.Set("duration", durationMS(end.Sub(start)))
	ret.Set("__id__", mapGetStr(low, "__id__"))
	if rv, ok := low.Get("retry"); ok && !low.Has("parallel") {
		rd := verifyRetryData(rv)
		low.Set("retry", rd)
		if !s.test {
			until, _ := rd.Get("until")
			result, _ := ret.Get("result")
			attempts, _ := rd.Int("attempts")
			if until != result && attempts > int64(retries) {
				interval, _ := rd.Int("interval")
				splay, _ := rd.Int("splay")
				if splay > 0 {
					interval += rand.Int64N(splay + 1)
				}
				select {
				case <-s.ctx.Done():
					s.abort = s.ctx.Err()
					return ret
				case <-time.After(time.Duration(interval) * time.Second):
				}
				orig := ret
				ret = s.call(low, chunks, running, reqs, retries+1)
				oc, _ := orig.Get("comment")
				nc, _ := ret.Get("comment")
				ncs := ""
				if payload.Truthy(nc) {
					ncs = pyStr(nc)
				}
				or, _ := orig.Get("result")
				ret.Set("comment", fmt.Sprintf("Attempt %d: Returned a result of \"%s\", with the following comment: \"%s\"", retries, pyStr(or), pyStr(oc))+"\n"+ncs)
				d1, _ := ret.Get("duration")
				d0, _ := orig.Get("duration")
				f1, _ := orderValue(d1)
				f0, _ := orderValue(d0)
				ret.Set("duration", f1+f0+float64(interval*1000))
				if retries == 1 {
					ret.Set("start_time", mapGetStr(orig, "start_time"))
				}
			}
		} else {
			c, _ := ret.Get("comment")
			cs := ""
			if payload.Truthy(c) {
				cs = pyStr(c)
			}
			ret.Set("comment", cs+"  "+fmt.Sprintf("The state would be retried every %s seconds (with a splay of up to %s seconds) a maximum of %s times or until a result of %s is returned",
				pyStr(mapGetStr(rd, "interval")), pyStr(mapGetStr(rd, "splay")), pyStr(mapGetStr(rd, "attempts")), pyStr(mapGetStr(rd, "until"))))
		}
	}
	unify(ret)
	return ret
}

// verifyRetryData is State.verify_retry_data.
func verifyRetryData(v any) *payload.Map {
	defaults := payload.NewMap("until", true, "attempts", int64(2), "splay", int64(0), "interval", int64(30))
	m, ok := asMap(v)
	if !ok {
		return defaults
	}
	out := &payload.Map{}
	for _, k := range []string{"until", "attempts", "interval", "splay"} {
		val, has := m.Get(k)
		def, _ := defaults.Get(k)
		if !has {
			out.Set(k, def)
			continue
		}
		valid := false
		if k == "until" {
			_, valid = val.(bool)
		} else {
			valid = isPyInt(val)
			if b, isB := val.(bool); isB {
				if b {
					val = int64(1)
				} else {
					val = int64(0)
				}
			}
		}
		if valid {
			out.Set(k, val)
		} else {
			out.Set(k, def)
		}
	}
	return out
}

// globalConditions is _match_global_state_conditions: a no-op ret when
// global_state_conditions exclude this state, nil otherwise.
func (s *stateRun) globalConditions(full, state string, name any) *payload.Map {
	if !s.gscRead {
		s.gscRead = true
		v, ok := s.opts.Get("global_state_conditions")
		if !ok && s.env != nil && s.env.Pillar != nil {
			v, ok = s.env.Pillar.Get("global_state_conditions")
		}
		if ok {
			s.gsc, _ = asMap(goToPayload(v))
		}
	}
	if s.gsc == nil {
		return nil
	}
	var matches []bool
	for _, it := range s.gsc.Items() {
		sm := keyText(it.Key)
		if sm != "*" && sm != full && sm != state {
			continue
		}
		conds := it.Value
		if str, ok := conds.(string); ok {
			conds = []any{str}
		}
		for _, c := range listOf(conds) {
			ok, _ := s.matcher.Match(c, target.TypeCompound, "", s.minion())
			matches = append(matches, ok)
		}
	}
	if len(matches) == 0 {
		return nil
	}
	for _, m := range matches {
		if m {
			return nil
		}
	}
	return payload.NewMap("name", name, "comment", "Failed to meet global state conditions. State not called.", "changes", &payload.Map{}, "result", nil)
}

// minion is this minion for target matching.
func (s *stateRun) minion() target.Minion {
	mn := target.Minion{}
	if s.env != nil {
		mn.ID = s.env.ID
		if s.env.Grains != nil {
			mn.Grains = s.env.Grains
		}
		if s.env.Pillar != nil {
			mn.Pillar = s.env.Pillar
		}
	}
	if ng, ok := asMap(goToPayload(s.optGet("nodegroups"))); ok {
		mn.Nodegroups = map[string]any{}
		for _, it := range ng.Items() {
			mn.Nodegroups[keyText(it.Key)] = it.Value
		}
	}
	return mn
}

// execRaw calls an execution function directly, like self.functions[fun]
// in Salt: its error is returned (an exception), and retcode is what it
// set in __context__.
func (s *stateRun) execRaw(fun string, args []any, kwargs *payload.Map) (any, int, error) {
	if s.env == nil || s.env.Registry == nil {
		return nil, 0, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, fun)
	}
	fn, ok := s.env.Registry.Lookup(fun)
	if !ok {
		return nil, 0, fmt.Errorf("%w: '%s'", modules.ErrNotAvailable, fun)
	}
	all := append([]any(nil), args...)
	if kwargs != nil && kwargs.Len() > 0 {
		kw := kwargs.Clone()
		kw.Set("__kwarg__", true)
		all = append(all, kw)
	}
	bound, err := modules.Binder{}.Bind(fn, all, nil)
	if err != nil {
		return nil, 0, err
	}
	call := &modules.Call{Fun: fun, Env: s.env, Args: bound}
	var ret any
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%v", p)
			}
		}()
		ret, err = fn.Fn(s.ctx, call)
	}()
	return ret, call.Retcode, err
}

// cmdRetcode runs cmd.retcode for onlyif/unless/check_cmd; an error is
// Salt's CommandExecutionError.
func (s *stateRun) cmdRetcode(cmd any, opts *payload.Map) (int64, error) {
	kw := payload.NewMap("ignore_retcode", true, "python_shell", true)
	for _, it := range opts.Items() {
		if it.Value != nil {
			kw.SetKey(it.Key, it.Value)
		}
	}
	ret, _, err := s.execRaw("cmd.retcode", []any{cmd}, kw)
	if err != nil {
		return 0, err
	}
	if n, ok := payload.AsInt(ret); ok {
		return n, nil
	}
	return -1, nil
}

// possibleCmdArgs are the low keys passed on to onlyif/unless commands.
var possibleCmdArgs = []string{"cwd", "root", "runas", "env", "prepend_path", "umask", "timeout", "success_retcodes"}

// runCheck is State._run_check: onlyif, unless and creates.
func (s *stateRun) runCheck(low *payload.Map) (*payload.Map, error) {
	ret := payload.NewMap("result", false, "comment", []any{})
	addKeys3(ret, low)
	cmdOpts := &payload.Map{}
	var exclude []any
	if v, ok := low.Get("cmd_opts_exclude"); ok {
		if l, isList := v.([]any); isList {
			exclude = l
		} else {
			exclude = []any{v}
		}
	}
	for _, a := range possibleCmdArgs {
		if !containsAny(exclude, a) {
			v, _ := low.Get(a)
			cmdOpts.Set(a, v)
		}
	}
	var shell any
	if v, ok := low.Get("shell"); ok && !containsAny(exclude, "shell") {
		shell = v
	} else if v, ok := s.grain("shell"); ok {
		shell = v
	}
	if shell != nil && shell != "/sbin/nologin" {
		cmdOpts.Set("shell", shell)
	}
	comments := []any{}
	merge := func(r *payload.Map, first bool) {
		res, _ := r.Get("result")
		if first {
			ret.Set("result", res)
		} else {
			prev, _ := ret.Get("result")
			if !payload.Truthy(res) {
				res = prev
			}
			ret.Set("result", res)
		}
		if c, ok := r.Get("comment"); ok {
			comments = append(comments, c)
		}
		if sw, ok := r.Get("skip_watch"); ok {
			if !payload.Truthy(sw) {
				sw, _ = ret.Get("skip_watch")
			}
			ret.Set("skip_watch", sw)
		}
	}
	if low.Has("onlyif") {
		r, err := s.runCheckOnlyif(low, cmdOpts)
		if err != nil {
			return nil, err
		}
		merge(r, true)
	}
	if low.Has("unless") {
		r, err := s.runCheckUnless(low, cmdOpts)
		if err != nil {
			return nil, err
		}
		merge(r, false)
	}
	if low.Has("creates") {
		merge(runCheckCreates(low), false)
	}
	ret.Set("comment", comments)
	return ret, nil
}

// addKeys3 sets __sls__, __id__ and name in that order.
func addKeys3(ret, low *payload.Map) {
	for _, k := range []string{"__sls__", "__id__", "name"} {
		v, _ := low.Get(k)
		ret.Set(k, v)
	}
}

// checkFunction is _run_check_function: run {"fun": ..., "args": [...],
// kwargs...} and return its result (optionally traversed by get_return)
// and retcode.
func (s *stateRun) checkFunction(entry *payload.Map) (any, int, error) {
	e := entry.Clone()
	getReturn, _ := e.Delete("get_return")
	fun, _ := e.Delete("fun")
	argsV, _ := e.Delete("args")
	args := append([]any(nil), listOf(argsV)...)
	if len(args) > 0 {
		am := &payload.Map{}
		for i, a := range args {
			am.SetKey(int64(i), a)
		}
		if err := s.formatSlots(am); err != nil {
			return nil, 0, err
		}
		for i := range args {
			args[i], _ = am.GetKey(int64(i))
		}
	}
	if err := s.formatSlots(e); err != nil {
		return nil, 0, err
	}
	result, rc, err := s.execRaw(pyStr(fun), args, e)
	if err != nil {
		return nil, 0, err
	}
	if payload.Truthy(getReturn) {
		result, _ = target.Traverse(result, pyStr(getReturn), ":")
	}
	return result, rc, nil
}

// runCheckOnlyif is State._run_check_onlyif.
func (s *stateRun) runCheckOnlyif(low, cmdOpts *payload.Map) (*payload.Map, error) {
	ret := payload.NewMap("result", false)
	addKeys3(ret, low)
	v, _ := low.Get("onlyif")
	entries, isList := v.([]any)
	if !isList {
		entries = []any{v}
	}
	checkCmd := func(code int64) bool {
		if r, _ := ret.Get("result"); code != 0 && r == false {
			ret.Set("comment", "onlyif condition is false")
			ret.Set("skip_watch", true)
			ret.Set("result", true)
			return false
		} else if code == 0 {
			ret.Set("comment", "onlyif condition is true")
			ret.Set("result", false)
		}
		return true
	}
	for _, entry := range entries {
		switch e := entry.(type) {
		case string:
			code, err := s.cmdRetcode(e, cmdOpts)
			if err != nil {
				code = 100
			}
			if !checkCmd(code) {
				return ret, nil
			}
		case *payload.Map:
			if !e.Has("fun") {
				ret.Set("comment", fmt.Sprintf("no `fun` argument in onlyif: %s", pyStr(e)))
				s.log.Warn(pyStr(mapGetStr(ret, "comment")))
				return ret, nil
			}
			result, rc, err := s.checkFunction(e)
			if err != nil {
				return nil, err
			}
			switch {
			case rc != 0:
				if !checkCmd(int64(rc)) {
					return ret, nil
				}
			case !payload.Truthy(result):
				ret.Set("comment", "onlyif condition is false")
				ret.Set("skip_watch", true)
				ret.Set("result", true)
				return ret, nil
			default:
				ret.Set("comment", "onlyif condition is true")
				ret.Set("result", false)
			}
		default:
			ret.Set("comment", "onlyif execution failed, bad type passed")
			ret.Set("result", false)
			return ret, nil
		}
	}
	return ret, nil
}

// runCheckUnless is State._run_check_unless.
func (s *stateRun) runCheckUnless(low, cmdOpts *payload.Map) (*payload.Map, error) {
	ret := payload.NewMap("result", false)
	addKeys3(ret, low)
	v, _ := low.Get("unless")
	entries, isList := v.([]any)
	if !isList {
		entries = []any{v}
	}
	checkCmd := func(code int64) bool {
		if code == 0 {
			ret.Set("comment", "unless condition is true")
			ret.Set("skip_watch", true)
			ret.Set("result", true)
			return false
		}
		ret.Delete("skip_watch")
		ret.Set("comment", "unless condition is false")
		ret.Set("result", false)
		return true
	}
	for _, entry := range entries {
		switch e := entry.(type) {
		case string:
			code, err := s.cmdRetcode(e, cmdOpts)
			if err != nil {
				code = 0
			}
			if checkCmd(code) {
				return ret, nil
			}
		case *payload.Map:
			if !e.Has("fun") {
				ret.Set("comment", fmt.Sprintf("no `fun` argument in unless: %s", pyStr(e)))
				s.log.Warn(pyStr(mapGetStr(ret, "comment")))
				return ret, nil
			}
			result, rc, err := s.checkFunction(e)
			if err != nil {
				return nil, err
			}
			switch {
			case rc != 0:
				if checkCmd(int64(rc)) {
					return ret, nil
				}
			case payload.Truthy(result):
				ret.Set("comment", "unless condition is true")
				ret.Set("skip_watch", true)
				ret.Set("result", true)
			default:
				ret.Set("comment", "unless condition is false")
				ret.Set("result", false)
				return ret, nil
			}
		default:
			ret.Set("comment", "unless condition is false, bad type passed")
			ret.Set("result", false)
		}
	}
	return ret, nil
}

// runCheckCreates is State._run_check_creates.
func runCheckCreates(low *payload.Map) *payload.Map {
	ret := payload.NewMap("result", false)
	addKeys3(ret, low)
	exists := func(p any) bool {
		s, ok := p.(string)
		if !ok {
			return false
		}
		_, err := os.Stat(s)
		return err == nil
	}
	v, _ := low.Get("creates")
	all := func(l []any) bool {
		for _, p := range l {
			if !exists(p) {
				return false
			}
		}
		return true
	}
	if str, ok := v.(string); ok && exists(str) {
		ret.Set("comment", str+" exists")
		ret.Set("result", true)
		ret.Set("skip_watch", true)
	} else if l, ok := v.([]any); ok && all(l) {
		ret.Set("comment", "All files in creates exist")
		ret.Set("result", true)
		ret.Set("skip_watch", true)
	} else {
		ret.Set("comment", "Creates files not found")
		ret.Set("result", false)
	}
	return ret
}

// runCheckCmd is State._run_check_cmd.
func (s *stateRun) runCheckCmd(low *payload.Map) (*payload.Map, error) {
	ret := payload.NewMap("result", false)
	addKeys3(ret, low)
	opts := &payload.Map{}
	if v, ok := s.grain("shell"); ok {
		opts.Set("shell", v)
	}
	v, _ := low.Get("check_cmd")
	entries, isList := v.([]any)
	if !isList {
		entries = []any{v}
	}
	for _, e := range entries {
		code, err := s.cmdRetcode(e, opts)
		if err != nil {
			return nil, err
		}
		if r, _ := ret.Get("result"); code == 0 && r == false {
			ret.Set("comment", "check_cmd determined the state succeeded")
			ret.Set("result", true)
		} else if code != 0 {
			ret.Set("comment", "check_cmd determined the state failed")
			ret.Set("result", false)
			return ret, nil
		}
	}
	return ret, nil
}

// listenRef is a (state, id, name) key of call_listen's crefs.
type listenRef struct{ state, id, name string }

func (r listenRef) has(v string) bool { return r.state == v || r.id == v || r.name == v }

// callListen is State.call_listen: run mod_watch for listen/listen_in
// requisites whose target reported changes.
func (s *stateRun) callListen(chunks []*payload.Map, running *payload.Map) *payload.Map {
	type listener struct {
		key listenRef
		val []any
	}
	var refs []listenRef
	crefs := map[listenRef]*payload.Map{}
	var listeners []listener
	for _, c := range chunks {
		r := listenRef{getStr(c, "state"), getStr(c, "__id__"), getStr(c, "name")}
		if _, dup := crefs[r]; !dup {
			refs = append(refs, r)
		}
		crefs[r] = c
		if v, ok := c.Get("listen"); ok {
			listeners = append(listeners, listener{r, listOf(v)})
		}
		if v, ok := c.Get("listen_in"); ok {
			for _, lin := range listOf(v) {
				lm, ok := asMap(lin)
				if !ok {
					continue
				}
				for _, kv := range lm.Items() {
					listeners = append(listeners, listener{listenRef{keyText(kv.Key), pyStr(kv.Value), "lookup"}, []any{payload.NewMap(getStr(c, "state"), mapGetStr(c, "__id__"))}})
				}
			}
		}
	}
	errs := &payload.Map{}
	lerr := func(state, id string) {
		tag := "Listen_Error_|-listen_" + id + "_|-listen_" + state + "_|-Listen_Error"
		errs.Set(tag, payload.NewMap("comment", fmt.Sprintf("Referenced state %s: %s does not exist", state, id), "name", "listen_"+state+":"+id, "result", false, "changes", &payload.Map{}))
	}
	var watchers []*payload.Map
	for _, l := range listeners {
		for _, to := range l.val {
			toMap, ok := asMap(to)
			if !ok {
				found := false
				for _, c := range chunks {
					if py.Equal(mapGetStr(c, "__id__"), to) || py.Equal(mapGetStr(c, "name"), to) {
						toMap = payload.NewMap(getStr(c, "state"), mapGetStr(c, "__id__"))
						found = true
					}
				}
				if !found {
					continue
				}
			}
			for _, kv := range toMap.Items() {
				lkey, lval := keyText(kv.Key), pyStr(kv.Value)
				exists := false
				for _, r := range refs {
					if r.state == lkey && r.has(lval) {
						exists = true
					}
				}
				if !exists {
					lerr(lkey, lval)
					continue
				}
				for _, r := range refs {
					if r.state != lkey || !r.has(lval) {
						continue
					}
					toTag := genTag(crefs[r])
					rv, ok := running.Get(toTag)
					rm, _ := asMap(rv)
					if !ok || rm == nil {
						continue
					}
					if ch, _ := rm.Get("changes"); !payload.Truthy(ch) {
						continue
					}
					known := false
					for _, r2 := range refs {
						if r2.state == l.key.state && r2.has(l.key.id) {
							known = true
						}
					}
					if !known {
						lerr(l.key.state, l.key.id)
						continue
					}
					for _, r2 := range refs {
						if r2.state != l.key.state || !r2.has(l.key.id) {
							continue
						}
						low := crefs[r2].Clone()
						low.Set("sfun", mapGetStr(low, "fun"))
						low.Set("fun", "mod_watch")
						low.Set("__id__", "listener_"+getStr(low, "__id__"))
						for _, k := range requisiteKeywords {
							low.Delete(k)
						}
						watchers = append(watchers, low)
					}
				}
			}
		}
	}
	ret := s.callChunks(watchers)
	for _, it := range ret.Items() {
		running.SetKey(it.Key, it.Value)
	}
	for _, it := range errs.Items() {
		m := it.Value.(*payload.Map)
		m.Set("__run_num__", int64(s.runNum))
		s.runNum++
		running.SetKey(it.Key, m)
	}
	return running
}

// modAggregate is Salt's _mod_aggregate: when aggregation is on for the
// chunk's module (option state_aggregate, or the chunk's "aggregate":
// True or a list of modules) and the module has a mod_aggregate, the
// requisites of the chunks already aggregated are added to low and the
// module folds other chunks into it.
func (s *stateRun) modAggregate(low, running *payload.Map, chunks []*payload.Map) {
	agg := s.optGet("state_aggregate")
	if agg == nil && s.env != nil && s.env.Pillar != nil {
		agg, _ = s.env.Pillar.Get("state_aggregate")
	}
	if v, ok := low.Get("aggregate"); ok {
		agg = v
	}
	state := getStr(low, "state")
	var mods []any
	switch x := agg.(type) {
	case bool:
		if !x {
			return
		}
		mods = []any{state}
	case []any:
		mods = x
	default:
		return
	}
	on := false
	for _, m := range mods {
		on = on || pyStr(m) == state
	}
	if !on || low.Bool("__agg__") {
		return
	}
	fn := s.reg.ModAggregate(state)
	if fn == nil {
		return
	}
	low.Set("__agg__", true)
	reqs := &payload.Map{}
	for _, ch := range chunks {
		if getStr(ch, "state") != state || !ch.Bool("__agg__") || pyStr(mapGet(low, "name")) == pyStr(mapGet(ch, "name")) {
			continue
		}
		for _, k := range append(append([]string(nil), requisiteKeywords...), requisiteInKeywords...) {
			v, ok := ch.Get(k)
			if !ok {
				continue
			}
			l, _ := v.([]any)
			if old, ok := reqs.Get(k); ok {
				ol, _ := old.([]any)
				reqs.Set(k, append(ol, l...))
			} else {
				reqs.Set(k, append([]any(nil), l...))
			}
		}
	}
	for _, it := range reqs.Items() {
		low.SetKey(it.Key, it.Value)
	}
	fn(low, chunks, running)
}

// modInit is Salt's _mod_init: the first time a chunk of a state module
// whose function exists runs, the module's mod_init (if registered) is
// called; a false return means it is tried again on the next chunk.
func (s *stateRun) modInit(low *payload.Map) {
	state := getStr(low, "state")
	if s.inited[state] {
		return
	}
	if _, ok := s.reg.Lookup(state + "." + getStr(low, "fun")); !ok {
		return
	}
	fn := s.reg.ModInit(state)
	if fn == nil {
		return
	}
	if fn(s.env, low) {
		if s.inited == nil {
			s.inited = map[string]bool{}
		}
		s.inited[state] = true
	}
}
