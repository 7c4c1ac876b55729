package beacons

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/wire/payload"
)

// ManageBeacons carries out one beacon management request, the data Salt's
// beacons.* functions fire on the minion bus with the manage_beacons tag:
// {"func": ..., "name": ..., "beacon_data": ..., "include_pillar": ...,
// "include_opts": ...}. It returns the data of the completion event Salt's
// minion answers with ({"complete", "comment", "beacons"}, {"complete",
// "beacons"} or {"complete", "vcomment", "valid"}). An error (wrapping
// ErrBadConfig) stands for the cases where Salt's minion raises and sends
// no completion event.
//
// This is the "beacons" service of the execution module
// (modules/builtin.BeaconManager).
func (m *Manager) ManageBeacons(_ context.Context, req *payload.Map) (*payload.Map, error) {
	if req == nil {
		req = &payload.Map{}
	}
	fn := req.Str("func")
	name := req.Str("name")
	data, _ := req.Get("beacon_data")
	data = Normalize(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch fn {
	case "list":
		incPillar, incOpts := true, true
		if v, ok := req.Get("include_pillar"); ok {
			incPillar = payload.Truthy(v)
		}
		if v, ok := req.Get("include_opts"); ok {
			incOpts = payload.Truthy(v)
		}
		b, err := m.getBeacons(incOpts, incPillar)
		if err != nil {
			return nil, err
		}
		return payload.NewMap("complete", true, "beacons", b), nil
	case "list_available":
		names := m.Modules()
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		return payload.NewMap("complete", true, "beacons", list), nil
	case "validate_beacon":
		valid, comment, err := m.validateBeacon(name, data)
		if err != nil {
			return nil, err
		}
		return payload.NewMap("complete", true, "vcomment", comment, "valid", valid), nil
	case "add", "modify", "delete", "enable_beacon", "disable_beacon":
		return m.changeBeacon(fn, name, data)
	case "enable", "disable":
		m.opts.Set("enabled", fn == "enable")
		return payload.NewMap("complete", true, "beacons", m.optsCopy()), nil
	case "reset":
		m.opts = &payload.Map{}
		return payload.NewMap("complete", true, "comment", "Beacons have been reset", "beacons", m.optsCopy()), nil
	}
	return nil, fmt.Errorf("%w: unknown function %q", ErrBadConfig, fn)
}

// changeBeacon handles the requests that change one named beacon, refused
// for beacons configured in pillar. m.mu is held.
func (m *Manager) changeBeacon(fn, name string, data any) (*payload.Map, error) {
	inPillar, err := m.getBeacons(false, true)
	if err != nil {
		return nil, err
	}
	if inPillar.Has(name) {
		var comment string
		switch fn {
		case "add":
			comment = fmt.Sprintf("Cannot update beacon item %s, because it is configured in pillar.", name)
		case "modify":
			comment = fmt.Sprintf("Cannot modify beacon item %s, it is configured in pillar.", name)
		case "delete":
			comment = fmt.Sprintf("Cannot delete beacon item %s, it is configured in pillar.", name)
		case "enable_beacon":
			comment = fmt.Sprintf("Cannot enable beacon item %s, it is configured in pillar.", name)
		default:
			comment = fmt.Sprintf("Cannot disable beacon item %s, it is configured in pillar.", name)
		}
		return payload.NewMap("complete", false, "comment", comment, "beacons", m.optsCopy()), nil
	}
	var comment string
	switch fn {
	case "add":
		if m.opts.Has(name) {
			comment = "Updating settings for beacon item: " + name
		} else {
			comment = "Added new beacon item: " + name
		}
		m.opts.Set(name, data)
	case "modify":
		comment = "Updating settings for beacon item: " + name
		m.opts.Set(name, data)
	case "delete":
		if _, ok := m.opts.Delete(name); ok {
			comment = "Deleting beacon item: " + name
		} else {
			comment = fmt.Sprintf("Beacon item %s not found.", name)
		}
	case "enable_beacon":
		if err := m.updateEnabled(name, true); err != nil {
			return nil, err
		}
		comment = "Enabling beacon item " + name
	case "disable_beacon":
		if err := m.updateEnabled(name, false); err != nil {
			return nil, err
		}
		comment = "Disabling beacon item " + name
	}
	return payload.NewMap("complete", true, "comment", comment, "beacons", m.optsCopy()), nil
}

// optsCopy returns a deep copy of the minion's own beacons. m.mu is held.
func (m *Manager) optsCopy() *payload.Map {
	return payload.DeepClone(m.opts).(*payload.Map)
}

// Beacons returns a copy of the minion's own beacon configuration (what
// beacons.save writes).
func (m *Manager) Beacons() *payload.Map {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.optsCopy()
}

// getBeacons is Beacon._get_beacons: the pillar's beacons updated with the
// minion's own. m.mu is held.
func (m *Manager) getBeacons(includeOpts, includePillar bool) (*payload.Map, error) {
	out := &payload.Map{}
	if includePillar {
		if v, ok := m.currentPillar().Get("beacons"); ok {
			pm, isMap := v.(*payload.Map)
			if !isMap {
				return nil, fmt.Errorf("%w: Beacons must be of type dict.", ErrBadConfig)
			}
			for _, it := range pm.Items() {
				out.SetKey(it.Key, it.Value)
			}
		}
	}
	if includeOpts {
		for _, it := range m.opts.Items() {
			out.SetKey(it.Key, it.Value)
		}
	}
	return payload.DeepClone(out).(*payload.Map), nil
}

// updateEnabled is Beacon._update_enabled on the minion's own beacons.
// m.mu is held.
func (m *Manager) updateEnabled(name string, enabled bool) error {
	v, ok := m.opts.Get(name)
	if !ok {
		return fmt.Errorf("%w: beacon %s is not in the minion configuration", ErrBadConfig, name)
	}
	switch c := v.(type) {
	case *payload.Map:
		c.Set("enabled", enabled)
	case []any:
		if i := itemIndex(c, "enabled"); i >= 0 {
			if im, ok := c[i].(*payload.Map); ok {
				im.Set("enabled", enabled)
				return nil
			}
			return fmt.Errorf("%w: beacon %s has a malformed enabled item", ErrBadConfig, name)
		}
		m.opts.Set(name, append(c, payload.NewMap("enabled", enabled)))
	default:
		return fmt.Errorf("%w: beacon %s is a %s", ErrBadConfig, name, payload.TypeName(v))
	}
	return nil
}

// validateBeacon is Beacon.validate_beacon: the module is the first list
// item's beacon_module, else name. m.mu is held.
func (m *Manager) validateBeacon(name string, data any) (bool, string, error) {
	list, ok := data.([]any)
	if !ok || len(list) == 0 {
		return false, "", fmt.Errorf("%w: beacon_data must be a non-empty list", ErrBadConfig)
	}
	module := name
	first, ok := list[0].(*payload.Map)
	if !ok {
		return false, "", fmt.Errorf("%w: beacon_data items must be dicts", ErrBadConfig)
	}
	if v, ok := first.Get("beacon_module"); ok {
		module = payload.Text(v)
	}
	mod, known := m.modules[module]
	if !known || mod.Validate == nil {
		return true, fmt.Sprintf("Beacon %s does not have a validate function, skipping validation.", module), nil
	}
	valid, comment := mod.Validate(payload.DeepClone(data))
	return valid, comment, nil
}
