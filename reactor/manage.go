package reactor

import (
	"crypto/subtle"
	"strings"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/payload"
)

// Requests of Salt's reactor runner (salt-run reactor.list, add, delete,
// is_leader, set_leader): the runner fires salt/reactors/manage/<verb>
// (namespaced under salt/run/<jid>/) with the root client key, the reactor
// answers on the bus.
const (
	manageReplyLeader = manageTag + "/leader/value"
	manageReplyAdd    = manageTag + "/add-complete"
	manageReplyDelete = manageTag + "/delete-complete"
	manageReplyList   = manageTag + "/list-results"
)

// manage handles an event in the salt/reactors/manage namespace. It
// returns true when the event is consumed; is_leader and set_leader
// requests then go on to the normal reaction matching, as in Salt.
func (r *Reactor) manage(tag string, data *payload.Map) bool {
	for _, reply := range []string{manageReplyLeader, manageReplyAdd, manageReplyDelete, manageReplyList} {
		if strings.HasSuffix(tag, reply) {
			return true // the reactor's own answers
		}
	}
	key := data.Str("key")
	if r.o.MasterKey == "" || subtle.ConstantTimeCompare([]byte(key), []byte(r.o.MasterKey)) != 1 {
		r.log.Error("received salt/reactors/manage event without matching master_key. discarding", "tag", tag)
		return true
	}
	if strings.HasSuffix(tag, manageTag+"/is_leader") {
		r.fire(manageReplyLeader, payload.NewMap("result", r.leader.Load()))
	}
	if strings.HasSuffix(tag, manageTag+"/set_leader") {
		if data.Str("id") == r.o.MasterID {
			v, _ := data.Get("value")
			r.leader.Store(payload.Truthy(v))
		}
		r.fire(manageReplyLeader, payload.NewMap("result", r.leader.Load()))
	}
	switch {
	case strings.HasSuffix(tag, manageTag+"/add"):
		res := r.Add(data.Str("event"), mapGet(data, "reactors"))
		r.fire(manageReplyAdd, payload.NewMap("reactors", r.List(), "result", res))
	case strings.HasSuffix(tag, manageTag+"/delete"):
		res := r.Delete(data.Str("event"))
		r.fire(manageReplyDelete, payload.NewMap("reactors", r.List(), "result", res))
	case strings.HasSuffix(tag, manageTag+"/list"):
		r.fire(manageReplyList, payload.NewMap("reactors", r.List()))
	default:
		return false
	}
	return true
}

func (r *Reactor) fire(tag string, data *payload.Map) {
	r.o.Bus.Publish(event.Event{Tag: tag, Data: data})
}

// List returns the reactor map (Salt's list_all): a list of one-key maps.
func (r *Reactor) List() []any {
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	return payload.DeepClone(append([]any{}, r.raw...)).([]any)
}

// Add adds a reactor for tag (exactly this tag glob) unless one exists,
// like Reactor.add_reactor, and returns Salt's {status, comment} answer.
// A map read from a file cannot be changed this way.
func (r *Reactor) Add(tag string, reactors any) *payload.Map {
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	if r.file != "" {
		return payload.NewMap("status", false, "comment", "Reactor map is read from "+r.file+"; edit that file.")
	}
	for _, item := range r.raw {
		if m, ok := item.(*payload.Map); ok && m.Len() > 0 && payload.KeyString(m.Items()[0].Key) == tag {
			return payload.NewMap("status", false, "comment", "Reactor already exists.")
		}
	}
	r.raw = append(r.raw, payload.NewMap(tag, payload.DeepClone(reactors)))
	r.compileMapLocked()
	return payload.NewMap("status", true, "comment", "Reactor added.")
}

// Delete removes the reactor of tag, like Reactor.delete_reactor.
func (r *Reactor) Delete(tag string) *payload.Map {
	r.mapMu.Lock()
	defer r.mapMu.Unlock()
	if r.file != "" {
		return payload.NewMap("status", false, "comment", "Reactor map is read from "+r.file+"; edit that file.")
	}
	for i, item := range r.raw {
		if m, ok := item.(*payload.Map); ok && m.Len() > 0 && payload.KeyString(m.Items()[0].Key) == tag {
			r.raw = append(r.raw[:i:i], r.raw[i+1:]...)
			r.compileMapLocked()
			return payload.NewMap("status", true, "comment", "Reactor deleted.")
		}
	}
	return payload.NewMap("status", false, "comment", "Reactor does not exists.")
}
