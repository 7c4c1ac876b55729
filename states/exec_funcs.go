package states

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// pillarFailure returns Salt's pillar-error list (retcode 5) when the
// pillar holds _errors and force is not set.
func pillarFailure(c *modules.Call, env *modules.Env, kw *payload.Map) []any {
	if payload.Truthy(mapGetStr(kw, "force")) || env == nil || env.Pillar == nil {
		return nil
	}
	v, _ := env.Pillar.Get("_errors")
	if !payload.Truthy(v) {
		return nil
	}
	c.Retcode = exitPillarFailure
	out := []any{"Pillar failed to render with the following messages:"}
	return append(out, listOf(v)...)
}

// pillarFailureErr is the CommandExecutionError the show_* functions raise
// on pillar errors.
func pillarFailureErr(c *modules.Call, env *modules.Env, kw *payload.Map) error {
	if msgs := pillarFailure(c, env, kw); msgs != nil {
		// str(CommandExecutionError("Pillar failed to render",
		// info=errors)): the errors as the nested outputter lists them
		lines := make([]string, 0, len(msgs)-1)
		for _, m := range msgs[1:] {
			lines = append(lines, "- "+pyStr(m))
		}
		return fmt.Errorf("%w: Pillar failed to render. Additional info follows:\n\n%s", modules.ErrExecution, strings.Join(lines, "\n"))
	}
	return nil
}

// setRetcode is modules.state._set_retcode.
func setRetcode(c *modules.Call, ret any, high *payload.Map) {
	c.Retcode = 0
	switch ret.(type) {
	case []string, []any:
		c.Retcode = exitCompilerError
		return
	}
	if !checkResult(ret, false, high) {
		c.Retcode = exitStateFailure
	}
}

// stringsToAny converts an error list to payload data.
func stringsToAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// normalize turns []string error lists into []any.
func normalize(v any) any {
	if l, ok := v.([]string); ok {
		return stringsToAny(l)
	}
	return v
}

// filterRunning is _filter_running (state_data: terse).
func filterRunning(ret any) any {
	m, ok := asMap(ret)
	if !ok {
		return ret
	}
	out := &payload.Map{}
	for _, it := range m.Items() {
		v, _ := asMap(it.Value)
		res, _ := v.Get("result")
		ch, _ := v.Get("changes")
		if !payload.Truthy(res) || payload.Truthy(ch) {
			out.SetKey(it.Key, it.Value)
		}
	}
	return out
}

// terse applies state_data: terse / terse=True.
func terse(s *setup, ret any) any {
	if s.run.opts.str("state_data") == "terse" || payload.Truthy(mapGetStr(s.kw, "terse")) {
		return filterRunning(ret)
	}
	return ret
}

// apply is state.apply.
func (x *execModule) apply(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if payload.Truthy(mapGetStr(kw, "mods")) {
		return x.sls(ctx, c, kw)
	}
	kw.Delete("mods")
	return x.highstate(ctx, c, kw)
}

// sls is state.sls.
func (x *execModule) sls(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	kw.Delete("env")
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	mods, _ := kw.Get("mods")
	var modList []any
	if l, ok := mods.([]any); ok {
		modList = l
	} else {
		modList = []any{mods}
	}
	if d := disabledMsgs(c.Env, modList); len(d) > 0 {
		c.Retcode = exitCompilerError
		return d, nil
	}
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true, baseEnv: true, jid: true})
	if err != nil {
		return nil, err
	}
	if pf := pillarFailure(c, s.run.env, kw); pf != nil {
		return pf, nil
	}
	saltenv := s.run.opts.str("saltenv")
	matches := &envMatches{}
	matches.add(saltenv, splitInput(mods)...)
	high, errs := s.hs.renderHighstate(matches)
	if len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	addExclude(high, mapGetStr(kw, "exclude"))
	ret, err := s.run.callHigh(high, mapGetStr(kw, "orchestration_jid"))
	if err != nil {
		return nil, err
	}
	ret = terse(s, normalize(ret))
	setRetcode(c, ret, high)
	return ret, nil
}

// highstate is state.highstate.
func (x *execModule) highstate(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if len(disabledMsgs(c.Env, []any{"highstate"})) > 0 {
		return payload.NewMap("name", "Salt highstate run is disabled. To re-enable, run state.enable highstate", "result", "False", "comment", "Disabled"), nil
	}
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	kw.Delete("env")
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true, jid: true})
	if err != nil {
		return nil, err
	}
	if pf := pillarFailure(c, s.run.env, kw); pf != nil {
		return pf, nil
	}
	exclude, ok := kw.Get("exclude")
	if !ok {
		exclude = []any{}
	}
	ret, err := s.hs.callHighstate(exclude, mapGetStr(kw, "whitelist"), payload.Truthy(mapGetStr(kw, "force")), mapGetStr(kw, "orchestration_jid"))
	if err != nil {
		return nil, err
	}
	ret = normalize(ret)
	if _, isMap := ret.(*payload.Map); isMap {
		ret = terse(s, ret)
	}
	setRetcode(c, ret, s.hs.building)
	return ret, nil
}

// single is state.single.
func (x *execModule) single(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	fun := pyStr(c.Args.Get("fun"))
	comps := strings.Split(fun, ".")
	if len(comps) < 2 {
		c.Retcode = exitCompilerError
		return "Invalid function passed", nil
	}
	name := c.Args.Get("name")
	low := &payload.Map{}
	for _, it := range kw.Items() {
		if k := keyText(it.Key); k == "test" || k == "queue" || strings.HasPrefix(k, "__pub_") {
			continue
		}
		low.SetKey(it.Key, it.Value)
	}
	low.Set("state", comps[0])
	low.Set("fun", comps[1])
	low.Set("__id__", name)
	low.Set("name", name)
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true})
	if err != nil {
		return nil, err
	}
	if errs := s.run.verifyData(low); len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	r := s.run.call(low, nil, &payload.Map{}, reqSet{}, 1)
	if s.run.abort != nil {
		return nil, s.run.abort
	}
	ret := payload.NewMap(genTag(low), r)
	setRetcode(c, ret, nil)
	return ret, nil
}

// slsID is state.sls_id.
func (x *execModule) slsID(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true, baseEnv: true})
	if err != nil {
		return nil, err
	}
	if pf := pillarFailure(c, s.run.env, kw); pf != nil {
		return pf, nil
	}
	id := c.Args.Get("id_")
	mods := c.Args.Get("mods")
	saltenv := s.run.opts.str("saltenv")
	matches := &envMatches{}
	matches.add(saltenv, splitInput(mods)...)
	high, errs := s.hs.renderHighstate(matches)
	errs = append(errs, verifyHigh(high)...)
	errs = append(errs, requisiteIn(high, s.run.disabledReqs(), s.run.log)...)
	if len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	chunks := compileHighData(high, nil)
	ret := &payload.Map{}
	for _, ch := range chunks {
		if v, _ := ch.Get("__id__"); py.Equal(v, id) {
			running := &payload.Map{}
			s.run.callChunk(ch, running, chunks, 0)
			if s.run.abort != nil {
				return nil, s.run.abort
			}
			for _, it := range running.Items() {
				ret.SetKey(it.Key, it.Value)
			}
		}
	}
	setRetcode(c, ret, nil)
	if ret.Len() == 0 {
		return nil, fmt.Errorf("%w: No matches for ID '%s' found in SLS '%s' within saltenv '%s'", modules.ErrInvocation, pyStr(id), pyStr(mods), saltenv)
	}
	return ret, nil
}

// high is state.high.
func (x *execModule) high(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	s, err := x.prepare(ctx, c, kw, prepareOpts{test: true, pillar: true})
	if err != nil {
		return nil, err
	}
	data, ok := asMap(c.Args.Get("data"))
	if !ok {
		return nil, fmt.Errorf("%w: high data must be a dictionary", modules.ErrInvocation)
	}
	high := payload.DeepClone(data).(*payload.Map)
	ret, err := s.run.callHigh(high, nil)
	if err != nil {
		return nil, err
	}
	ret = normalize(ret)
	setRetcode(c, ret, high)
	return ret, nil
}

// low is state.low.
func (x *execModule) low(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	if conflict := x.checkQueue(ctx, c, kw); conflict != nil {
		return conflict, nil
	}
	s, err := x.prepare(ctx, c, kw, prepareOpts{})
	if err != nil {
		return nil, err
	}
	data, ok := asMap(c.Args.Get("data"))
	if !ok {
		return nil, fmt.Errorf("%w: low data must be a dictionary", modules.ErrInvocation)
	}
	low := payload.DeepClone(data).(*payload.Map)
	if errs := s.run.verifyData(low); len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	ret := s.run.call(low, nil, &payload.Map{}, reqSet{}, 1)
	if s.run.abort != nil {
		return nil, s.run.abort
	}
	if checkResult(ret, false, nil) {
		c.Retcode = exitStateFailure
	}
	return ret, nil
}

// showSLS is state.show_sls (high data) and state.show_low_sls (low=true).
func (x *execModule) showSLS(ctx context.Context, c *modules.Call, kw *payload.Map, low bool) (any, error) {
	kw.Delete("env")
	s, conflict, err := x.prepareShow(ctx, c, kw, prepareOpts{test: true, pillar: true, baseEnv: true})
	if conflict != nil || err != nil {
		return conflict, err
	}
	saltenv := s.run.opts.str("saltenv")
	matches := &envMatches{}
	matches.add(saltenv, splitInput(mapGetStr(kw, "mods"))...)
	high, errs := s.hs.renderHighstate(matches)
	errs = append(errs, verifyHigh(high)...)
	if len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	if !low {
		return high, nil
	}
	chunks := compileHighData(high, nil)
	out := make([]any, len(chunks))
	for i, ch := range chunks {
		out[i] = ch
	}
	return out, nil
}

// showHighstate is state.show_highstate.
func (x *execModule) showHighstate(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	s, conflict, err := x.prepareShow(ctx, c, kw, prepareOpts{pillar: true})
	if conflict != nil || err != nil {
		return conflict, err
	}
	ret, err := s.hs.compileHighstate()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	ret = normalize(ret)
	setRetcode(c, ret, nil)
	return ret, nil
}

// showLowstate is state.show_lowstate (and state.show_states with
// slsOnly: the SLS names in order).
func (x *execModule) showLowstate(ctx context.Context, c *modules.Call, kw *payload.Map, slsOnly bool) (any, error) {
	s, conflict, err := x.prepareShow(ctx, c, kw, prepareOpts{})
	if conflict != nil || err != nil {
		return conflict, err
	}
	ret, err := s.hs.compileLowChunks()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	ret = normalize(ret)
	if !slsOnly {
		return ret, nil
	}
	var out []any
	seen := map[string]bool{}
	for _, ch := range listOf(ret) {
		m, ok := asMap(ch)
		if !ok {
			setRetcode(c, ret, nil)
			return ret, nil
		}
		sls := getStr(m, "__sls__")
		if !seen[sls] {
			seen[sls] = true
			out = append(out, mapGetStr(m, "__sls__"))
		}
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

// showTop is state.show_top.
func (x *execModule) showTop(ctx context.Context, c *modules.Call, kw *payload.Map) (any, error) {
	kw.Delete("env")
	s, conflict, err := x.prepareShow(ctx, c, kw, prepareOpts{})
	if conflict != nil || err != nil {
		return conflict, err
	}
	top, err := s.hs.getTop()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if errs := verifyTops(top); len(errs) > 0 {
		c.Retcode = exitCompilerError
		return stringsToAny(errs), nil
	}
	return s.hs.topMatches(top).payload(), nil
}

// splitLowTag is salt.state.split_low_tag; ok is false for a malformed tag.
func splitLowTag(tag string) (state, id string, ok bool) {
	parts := strings.Split(tag, "_|-")
	if len(parts) != 4 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// checkResult is salt.utils.state.check_result: does a run's return count
// as a success (onfail handlers with onfail_stop: False included)?
func checkResult(running any, recurse bool, high *payload.Map) bool {
	rm, ok := asMap(running)
	if !ok || rm.Len() == 0 {
		return false
	}
	ret := true
	for _, it := range rm.Items() {
		id := keyText(it.Key)
		sr, isMap := asMap(it.Value)
		if !recurse {
			if id == "__extend__" {
				if _, isList := it.Value.([]any); !isList {
					ret = false
				}
			} else if !isMap {
				ret = false
			}
		}
		if ret && isMap {
			r, has := sr.Get("result")
			if has && r == false {
				ret = false
			} else if !has {
				ret = checkResult(sr, true, high)
			}
		}
		if !ret {
			ret = checkOnfailRequisites(id, it.Value, rm, high) == true
		}
		if !ret {
			break
		}
	}
	return ret
}

// checkOnfailRequisites is salt.utils.state.check_onfail_requisites: true
// or false when the failed state has onfail handlers (with onfail_stop:
// False) that succeeded or failed, nil when it has none.
func checkOnfailRequisites(stateID string, stateResult any, running, high *payload.Map) any {
	if stateID == "" || !payload.Truthy(stateResult) || high == nil || high.Len() == 0 {
		return nil
	}
	onfails := searchOnfailRequisites(stateID, high)
	if len(onfails) == 0 {
		return nil
	}
	var nret any
	for _, h := range onfails {
		for _, it := range running.Items() {
			rid := keyText(it.Key)
			rstate, _ := asMap(it.Value)
			var st, sid string
			if strings.Contains(rid, "_|-") {
				var ok bool
				if st, sid, ok = splitLowTag(rid); !ok {
					continue
				}
			} else {
				sid = rid
				if rstate != nil {
					if v, ok := rstate.Get("__id__"); ok {
						sid = pyStr(v)
					}
				}
				st = h.mod
			}
			if h.mod == st && h.id == sid {
				var res any = "_empty"
				if rstate != nil {
					if v, ok := rstate.Get("result"); ok {
						res = v
					}
				}
				if res == true || res == false {
					nret = res
				}
				if res == false {
					break
				}
			}
		}
		if nret == nil {
			nret = false
		}
	}
	return nret
}

// onfailHandler is one (ID, state) handling a failure.
type onfailHandler struct{ id, mod string }

// searchOnfailRequisites is salt.utils.state.search_onfail_requisites.
func searchOnfailRequisites(sid string, high *payload.Map) []onfailHandler {
	var out []onfailHandler
	stState, stID := "", sid
	hasState := false
	if strings.Contains(sid, "_|-") {
		if s, id, ok := splitLowTag(sid); ok {
			stState, stID, hasState = s, id, true
		}
	}
	for _, it := range high.Items() {
		fstate := keyText(it.Key)
		if fstate == stID {
			continue
		}
		body, ok := asMap(it.Value)
		if !ok {
			continue
		}
		for _, m := range body.Items() {
			mod, isStr := m.Key.(string)
			if !isStr || strings.HasPrefix(mod, "__") {
				continue
			}
			chunk, ok := m.Value.([]any)
			if !ok {
				continue
			}
			handled := false
			for _, fd := range chunk {
				fm, ok := asMap(fd)
				if !ok {
					continue
				}
				v, has := fm.Get("onfail_stop")
				handled = has && v == false
				if handled {
					break
				}
			}
			if !handled {
				continue
			}
			for _, fd := range chunk {
				fm, ok := asMap(fd)
				if !ok {
					continue
				}
				for _, kv := range fm.Items() {
					if kv.Key != "onfail" {
						continue
					}
					for _, freq := range listOf(kv.Value) {
						frm, ok := asMap(freq)
						if !ok {
							continue
						}
						for _, f := range frm.Items() {
							fmod := keyText(f.Key)
							want := fmod
							if hasState {
								want = stState
							}
							if pyStr(f.Value) == stID && fmod == want {
								out = append(out, onfailHandler{fstate, mod})
							}
						}
					}
				}
			}
		}
	}
	return out
}
