package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// stateRets keeps, of a multi-state return ({tag: ret}), each ret's name,
// result, changes and comment (timings and run numbers differ between
// runs).
func stateRets(_ string, v any) any {
	m, ok := v.(*payload.Map)
	if !ok {
		return v
	}
	out := &payload.Map{}
	for _, it := range m.Items() {
		r, ok := it.Value.(*payload.Map)
		if !ok {
			out.SetKey(it.Key, it.Value)
			continue
		}
		keep := &payload.Map{}
		for _, k := range []string{"name", "result", "changes", "comment", "__run_num__"} {
			if x, ok := r.Get(k); ok {
				keep.Set(k, x)
			}
		}
		out.SetKey(it.Key, keep)
	}
	return out
}

// TestFileAccumulatedGolden compares file.accumulated feeding
// file.managed templates and file.blockreplace (and an orphaned
// accumulator) with Salt 3006 (testdata/golden/file_accumulated.json),
// each an SLS run through state.sls.
func TestFileAccumulatedGolden(t *testing.T) {
	managed := `acc-a:
  file.accumulated:
    - filename: {{ pillar['d'] }}/out
    - text: first line
    - require_in:
      - file: target
acc-b:
  file.accumulated:
    - filename: {{ pillar['d'] }}/out
    - text:
      - x
      - y
      - x
    - require_in:
      - file: target
target:
  file.managed:
    - name: {{ pillar['d'] }}/out
    - source: salt://t.j2
    - template: jinja
`
	block := `acc-block:
  file.accumulated:
    - filename: {{ pillar['d'] }}/conf
    - text:
      - allow 10.0.0.1
      - allow 10.0.0.2
    - watch_in:
      - file: block
block:
  file.blockreplace:
    - name: {{ pillar['d'] }}/conf
    - marker_start: "# BEGIN acl"
    - marker_end: "# END acl"
    - content: "deny all"
    - append_if_not_found: True
`
	orphan := `lonely:
  file.accumulated:
    - filename: {{ pillar['d'] }}/out
    - text: nobody reads me
`
	notext := `acc-none:
  file.accumulated:
    - filename: {{ pillar['d'] }}/out
    - text: null
    - require_in:
      - file: t2
t2:
  file.managed:
    - name: {{ pillar['d'] }}/out
    - contents: plain
`
	// The SLS files find the case directory in pillar "d".
	sls := func(name, mod string, test bool) salttest.Call {
		kw := []any{"pillar", payload.NewMap("d", "{dir}")}
		if test {
			kw = append(kw, "test", true)
		}
		return salttest.Call{Name: name, Fun: "state.sls", Args: []any{mod}, Kwargs: kw}
	}
	calls := []salttest.Call{
		sls("managed template", "managed", false),
		sls("managed template test", "managed", true),
		sls("blockreplace", "block", false),
		sls("orphan", "orphan", false),
		sls("no text", "notext", false),
	}
	calls[2].Files = map[string]string{"conf": "top\n"}
	salttest.Run(t, salttest.Suite{Name: "file_accumulated", Calls: calls, Grains: payloadLinuxGrains(), Normalize: stateRets,
		Srv: map[string]string{"t.j2": "head\n{% for k, v in accumulator | dictsort %}{{ k }}: {{ v | join(',') }}\n{% endfor %}tail\n",
			"managed.sls": managed, "block.sls": block, "orphan.sls": orphan, "notext.sls": notext}},
		suiteRegistry(t))
}
