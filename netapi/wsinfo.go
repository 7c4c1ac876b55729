package netapi

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// saltInfo is rest_cherrypy's event_processor.SaltInfo: a live view of
// jobs and minions built from events, sent to a websocket client as JSON
// ({"jobs": {...}} or {"minions": [...]}) whenever it changes.
type saltInfo struct {
	send    func(string) error
	jobs    *payload.Map // jid -> job
	minions *payload.Map // id -> {grains}
}

func newSaltInfo(send func(string) error) *saltInfo {
	return &saltInfo{send: send, jobs: &payload.Map{}, minions: &payload.Map{}}
}

func (si *saltInfo) publish(key string, v any) error {
	b, err := json.Marshal(map[string]any{key: v})
	if err != nil {
		return nil
	}
	return si.send(string(b))
}

func (si *saltInfo) publishMinions() error {
	list := []any{}
	for _, it := range si.minions.Items() {
		m := &payload.Map{}
		if info, ok := it.Value.(*payload.Map); ok {
			for _, kv := range info.Items() {
				m.SetKey(kv.Key, kv.Value)
			}
		}
		m.Set("id", it.Key)
		list = append(list, m)
	}
	return si.publish("minions", list)
}

// process handles one event; newMinions is called with a comma-separated
// list of minions a presence event shows for the first time.
func (si *saltInfo) process(tag string, data any, newMinions func(tgt string)) error {
	d, _ := data.(*payload.Map)
	parts := strings.Split(tag, "/")
	if len(parts) < 2 || d == nil {
		return nil
	}
	switch parts[1] {
	case "job":
		if len(parts) < 4 {
			return nil
		}
		switch parts[3] {
		case "new":
			if err := si.newJob(d); err != nil {
				return err
			}
			if d.Str("fun") == "grains.items" {
				si.minions = &payload.Map{}
			}
		case "ret":
			if len(parts) != 5 {
				return nil
			}
			if err := si.retJob(parts[2], parts[4], d); err != nil {
				return err
			}
			if d.Str("fun") == "grains.items" {
				m := si.minion(parts[4])
				m.Set("grains", get(d, "return"))
				return si.publishMinions()
			}
		}
	case "key":
		switch d.Str("act") {
		case "delete":
			si.minions.Delete(d.Str("id"))
		case "accept":
			si.minion(d.Str("id"))
		}
		return si.publishMinions()
	case "presence":
		present := map[string]bool{}
		for _, p := range d.List("present") {
			if s, ok := p.(string); ok {
				present[s] = true
			}
		}
		changed := false
		for _, id := range si.minions.Keys() {
			if !present[id] {
				si.minions.Delete(id)
				changed = true
			}
		}
		var fresh []string
		for id := range present {
			if !si.minions.Has(id) {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) > 0 {
			sort.Strings(fresh)
			changed = true
			newMinions(strings.Join(fresh, ","))
		}
		if changed {
			return si.publishMinions()
		}
	}
	return nil
}

func get(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

func (si *saltInfo) minion(id string) *payload.Map {
	if m, ok := si.minions.Get(id); ok {
		if mm, ok := m.(*payload.Map); ok {
			return mm
		}
	}
	m := &payload.Map{}
	si.minions.Set(id, m)
	return m
}

func (si *saltInfo) newJob(d *payload.Map) error {
	minions := &payload.Map{}
	for _, m := range d.List("minions") {
		if s, ok := m.(string); ok {
			minions.Set(s, payload.NewMap("success", false))
		}
	}
	jid := d.Str("jid")
	si.jobs.Set(jid, payload.NewMap("jid", jid, "start_time", get(d, "_stamp"), "minions", minions,
		"fun", get(d, "fun"), "tgt", get(d, "tgt"), "tgt_type", get(d, "tgt_type"), "state", "running"))
	return si.publish("jobs", si.jobs)
}

func (si *saltInfo) retJob(jid, id string, d *payload.Map) error {
	job, _ := get(si.jobs, jid).(*payload.Map)
	if job == nil {
		job = &payload.Map{}
		si.jobs.Set(jid, job)
	}
	minions, _ := get(job, "minions").(*payload.Map)
	if minions == nil {
		minions = &payload.Map{}
		job.Set("minions", minions)
	}
	m, _ := get(minions, id).(*payload.Map)
	if m == nil {
		m = &payload.Map{}
		minions.Set(id, m)
	}
	m.Set("return", get(d, "return")).Set("retcode", get(d, "retcode")).Set("success", get(d, "success"))
	complete := true
	for _, it := range minions.Items() {
		if mm, ok := it.Value.(*payload.Map); ok && !payload.Truthy(get(mm, "success")) {
			complete = false
		}
	}
	if complete {
		job.Set("state", "complete")
	}
	return si.publish("jobs", si.jobs)
}
