package virt

import (
	"context"
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// snapInfo is one parsed snapshot.
type snapInfo struct {
	name    string
	created float64
	desc    *payload.Map
}

// describeSnapshots is [_parse_snapshot_description(s) for s in listAllSnapshots()].
func describeSnapshots(d Domain) ([]any, error) {
	infos, err := snapshots(d)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, s := range infos {
		out = append(out, s.desc)
	}
	return out, nil
}

func snapshots(d Domain) ([]snapInfo, error) {
	names, err := d.SnapshotNames()
	if err != nil {
		return nil, err
	}
	current, _ := d.CurrentSnapshot()
	var out []snapInfo
	for _, n := range names {
		x, err := d.SnapshotXML(n)
		if err != nil {
			return nil, err
		}
		doc, err := parseXML(x)
		if err != nil {
			return nil, err
		}
		si := snapInfo{name: n, desc: payload.NewMap()}
		for _, ch := range doc.Children {
			switch ch.Tag {
			case "name":
				si.desc.Set("name", ch.Text)
			case "creationTime":
				f, _ := strconv.ParseFloat(strings.TrimSpace(ch.Text), 64)
				si.created = f
				si.desc.Set("created", pyISO(time.Unix(0, int64(f*1e9)).Local(), " "))
			case "state":
				si.desc.Set("running", ch.Text == "running")
			}
		}
		si.desc.Set("current", n == current)
		out = append(out, si)
	}
	return out, nil
}

func (m *Module) snapshot(ctx context.Context, c *modules.Call) (any, error) {
	domain := c.Args.Str("domain")
	name := ""
	if v := c.Args.Get("name"); payload.Truthy(v) {
		name = payload.Text(v)
	}
	if name != "" && strings.EqualFold(name, domain) {
		return nil, fmt.Errorf("%w: Virtual Machine %s is already defined. Please choose another name for the snapshot", modules.ErrExecution, name)
	}
	if name == "" {
		name = domain + "-" + time.Now().Format("20060102-150405")
	}
	if v := c.Args.Get("suffix"); payload.Truthy(v) {
		name += "-" + payload.Text(v)
	}
	conn, err := m.conn(ctx, c)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	d, err := getDomain(conn, domain)
	if err != nil {
		return nil, err
	}
	if _, err := d.CreateSnapshot("<domainsnapshot><name>" + html.EscapeString(name) + "</name></domainsnapshot>"); err != nil {
		return nil, libvirtErr(err)
	}
	return payload.NewMap("name", name), nil
}

func (m *Module) deleteSnapshots(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	want := map[string]bool{}
	for _, v := range c.Args.Varargs {
		want[payload.Text(v)] = true
	}
	conn, err := m.conn(ctx, c)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	d, err := getDomain(conn, name)
	if err != nil {
		return nil, err
	}
	snaps, err := snapshots(d)
	if err != nil {
		return nil, libvirtErr(err)
	}
	deleted := payload.NewMap()
	for _, s := range snaps {
		if len(want) == 0 || want[s.name] {
			deleted.Set(s.name, s.desc)
			if err := d.DeleteSnapshot(s.name); err != nil {
				return nil, libvirtErr(err)
			}
		}
	}
	left, err := describeSnapshots(d)
	if err != nil {
		return nil, libvirtErr(err)
	}
	avail := payload.NewMap()
	if len(left) == 0 {
		avail.Set(name, "N/A")
	} else {
		avail.Set(name, left)
	}
	return payload.NewMap("available", avail, "deleted", deleted), nil
}

func (m *Module) revertSnapshot(ctx context.Context, c *modules.Call) (any, error) {
	conn, err := m.conn(ctx, c)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	d, err := getDomain(conn, c.Args.Str("name"))
	if err != nil {
		return nil, err
	}
	snaps, err := snapshots(d)
	if err != nil {
		return nil, libvirtErr(err)
	}
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].created > snaps[j].created })
	switch len(snaps) {
	case 0:
		return nil, fmt.Errorf("%w: No snapshots found", modules.ErrExecution)
	case 1:
		return nil, fmt.Errorf("%w: Cannot revert to itself: only one snapshot is available.", modules.ErrExecution)
	}
	want := ""
	if v := c.Args.Get("vm_snapshot"); payload.Truthy(v) {
		want = payload.Text(v)
	}
	idx := -1
	for i, s := range snaps {
		if want == "" {
			if s.desc.Bool("current") && i+1 < len(snaps) {
				idx = i + 1
				break
			}
		} else if s.name == want {
			idx = i
			break
		}
	}
	if idx < 0 {
		// Salt tests the snapshot function object here, always true.
		return nil, fmt.Errorf("%w: Snapshot \"%s\" not found", modules.ErrExecution, pyNone(want))
	}
	snap := snaps[idx]
	if snap.desc.Bool("current") {
		return nil, fmt.Errorf("%w: Cannot revert to the currently running snapshot.", modules.ErrExecution)
	}
	if err := d.RevertSnapshot(snap.name); err != nil {
		return nil, libvirtErr(err)
	}
	ret := payload.NewMap("reverted", snap.name)
	if c.Args.Bool("cleanup") {
		del := []any{}
		for _, s := range snaps {
			if s.name == snap.name {
				break
			}
			del = append(del, s.name)
			if err := d.DeleteSnapshot(s.name); err != nil {
				return nil, libvirtErr(err)
			}
		}
		ret.Set("deleted", del)
	} else {
		ret.Set("deleted", "N/A")
	}
	return ret, nil
}

func pyNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
