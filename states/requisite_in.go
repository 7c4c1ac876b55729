package states

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// reqInKeys are the argument names requisite_in turns into extensions.
var reqInKeys = map[string]bool{
	"require_in": true, "watch_in": true, "onfail_in": true, "onchanges_in": true,
	"use": true, "use_in": true, "prereq": true, "prereq_in": true,
}

// reqInAll is req_in plus the plain requisites (arguments "use" never copies).
var reqInAll = map[string]bool{
	"require_in": true, "watch_in": true, "onfail_in": true, "onchanges_in": true,
	"use": true, "use_in": true, "prereq": true, "prereq_in": true,
	"require": true, "watch": true, "onfail": true, "onfail_stop": true, "onchanges": true,
}

// extendSet is the ordered {id: {state: [args], __env__, __sls__}} that
// requisite_in builds before handing it to reconcileExtend.
type extendSet struct{ m *payload.Map }

// body returns extend[name], created empty when missing.
func (e extendSet) body(name any) *payload.Map {
	if v, ok := e.m.GetKey(name); ok {
		return v.(*payload.Map)
	}
	b := &payload.Map{}
	e.m.SetKey(name, b)
	return b
}

// appendArg appends arg to extend[name][state].
func (e extendSet) appendArg(name any, state string, arg any) {
	b := e.body(name)
	l := listOf(mapGetStr(b, state))
	b.Set(state, append(l, arg))
}

// ensure makes extend[name][state] exist.
func (e extendSet) ensure(name any, state string) {
	b := e.body(name)
	if !b.Has(state) {
		b.Set(state, []any{})
	}
}

// addReq adds {rkey: [{state: id}]} to extend[name][_state], or appends
// {state: id} to an rkey entry already there, recording the origin's env
// and SLS.
func (e extendSet) addReq(name any, reqState, rkey, state string, id any, origin *payload.Map) {
	e.ensure(name, reqState)
	b := e.body(name)
	b.Set("__env__", mapGetStr(origin, "__env__"))
	b.Set("__sls__", mapGetStr(origin, "__sls__"))
	l := listOf(mapGetStr(b, reqState))
	found := false
	for _, it := range l {
		im, ok := asMap(it)
		if ok && firstKey(im) == rkey {
			im.Set(rkey, append(listOf(mapGetStr(im, rkey)), payload.NewMap(state, id)))
			found = true
		}
	}
	if found {
		return
	}
	b.Set(reqState, append(l, payload.NewMap(rkey, []any{payload.NewMap(state, id)})))
}

// requisiteIn is State.requisite_in: turn require_in/watch_in/onfail_in/
// onchanges_in/prereq/prereq_in/use/use_in into extensions of the target
// states, then reconcile them.
func requisiteIn(high *payload.Map, disabled []string, log *slog.Logger) []string {
	ext := extendSet{&payload.Map{}}
	var errs []string
	isDisabled := func(k string) bool {
		for _, d := range disabled {
			if d == k {
				return true
			}
		}
		return false
	}
	for _, it := range high.Items() {
		id := it.Key
		body, ok := asMap(it.Value)
		if !ok {
			continue
		}
		for _, sit := range body.Items() {
			state := keyText(sit.Key)
			if strings.HasPrefix(state, "__") {
				continue
			}
			for _, arg := range listOf(sit.Value) {
				am, ok := asMap(arg)
				if !ok || am.Len() < 1 {
					continue
				}
				key := firstKey(am)
				if !reqInKeys[key] {
					continue
				}
				if isDisabled(key) {
					log.Warn(fmt.Sprintf("The %s requisite has been disabled, Ignoring.", key))
					continue
				}
				rkey := strings.SplitN(key, "_", 2)[0]
				items := mapGetStr(am, key)
				if im, ok := asMap(items); ok {
					for _, kv := range im.Items() {
						reqState := keyText(kv.Key)
						name := kv.Value
						ext.body(name)
						if i := strings.IndexByte(reqState, '.'); i >= 0 {
							errs = append(errs, fmt.Sprintf("Invalid requisite in %s: %s for %s, in SLS '%s'. Requisites must not contain dots, did you mean '%s'?", rkey, reqState, pyStr(name), getStr(body, "__sls__"), reqState[:i]))
							reqState = reqState[:i]
						}
						ext.addReq(name, reqState, rkey, state, id, body)
					}
				}
				list, ok := items.([]any)
				if !ok {
					continue
				}
				var hinges []idRef
				for _, ind := range list {
					indMap, isMap := asMap(ind)
					if !isMap {
						if b, ok := asMap(mapGet(high, ind)); ok && hasKey(high, ind) {
							first := ""
							for _, k := range b.Items() {
								if !isDunder(k.Key) {
									first = keyText(k.Key)
									break
								}
							}
							indMap = payload.NewMap(first, ind)
						} else {
							found := false
							for _, hit := range high.Items() {
								hb, ok := asMap(hit.Value)
								if !ok {
									continue
								}
								for _, st := range hb.Items() {
									if isDunder(st.Key) {
										continue
									}
									for _, j := range listOf(st.Value) {
										jm, ok := asMap(j)
										if !ok || !jm.Has("name") {
											continue
										}
										if py.Equal(mapGetStr(jm, "name"), ind) {
											indMap = payload.NewMap(keyText(st.Key), hit.Key)
											found = true
										}
									}
								}
							}
							if !found {
								continue
							}
						}
					}
					if indMap.Len() < 1 {
						continue
					}
					pk, pname, _ := firstItem(indMap)
					pstate := keyText(pk)
					if pstate == "sls" {
						hinges = findSLSIDs(pname, high)
					} else {
						hinges = append(hinges, idRef{pname, pstate})
					}
					if i := strings.IndexByte(pstate, '.'); i >= 0 {
						errs = append(errs, fmt.Sprintf("Invalid requisite in %s: %s for %s, in SLS '%s'. Requisites must not contain dots, did you mean '%s'?", rkey, pstate, pyStr(pname), getStr(body, "__sls__"), pstate[:i]))
					}
					for _, h := range hinges {
						name, reqState := h.id, h.state
						if key == "prereq_in" {
							ext.appendArg(id, state, payload.NewMap("prerequired", []any{payload.NewMap(reqState, name)}))
						}
						switch key {
						case "prereq":
							for _, ref := range findName(name, reqState, high, true) {
								ext.appendArg(ref.id, ref.state, payload.NewMap("prerequired", []any{payload.NewMap(state, id)}))
							}
							continue
						case "use_in":
							for _, ref := range findName(name, reqState, high, true) {
								if !payload.Truthy(ref.id) {
									continue
								}
								extArgs := stateArgs(ref.id, reqState, high)
								ext.ensure(ref.id, ref.state)
								for _, a := range listOf(mapGetStr(body, state)) {
									if useable(a, extArgs) {
										ext.appendArg(ref.id, ref.state, a)
									}
								}
							}
							continue
						case "use":
							for _, ref := range findName(name, reqState, high, true) {
								if !payload.Truthy(ref.id) {
									continue
								}
								locArgs := stateArgs(id, state, high)
								ext.ensure(id, state)
								src, _ := asMap(mapGet(high, ref.id))
								if src == nil {
									continue
								}
								for _, a := range listOf(mapGetStr(src, ref.state)) {
									if useable(a, locArgs) {
										ext.appendArg(id, state, a)
									}
								}
							}
							continue
						}
						ext.addReq(name, reqState, rkey, state, id, body)
					}
				}
			}
		}
	}
	var extList []any
	for _, it := range ext.m.Items() {
		extList = append(extList, (&payload.Map{}).SetKey(it.Key, it.Value))
	}
	if extList == nil {
		extList = []any{}
	}
	high.Set("__extend__", extList)
	errs = append(errs, reconcileExtend(high, true)...)
	return errs
}

// useable reports whether a "use" requisite copies arg: single-key dicts
// other than requisites, name, names and the arguments already given.
func useable(arg any, given map[string]bool) bool {
	am, ok := asMap(arg)
	if !ok || am.Len() != 1 {
		return false
	}
	k := firstKey(am)
	return !reqInAll[k] && !given[k] && k != "name" && k != "names"
}
