package render

import (
	"context"
	"sync"
	"unsafe"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// AggregateMarks records the maps and lists a renderer made
// salt.utils.aggregation aggregates (the yamlex renderer's !aggregate
// values: Salt's AggregatedMap and AggregatedSequence), so a caller
// merging the data with Salt's "aggregate" strategy treats them as Salt
// does. Values are recorded by identity: a copy is not marked. A nil
// *AggregateMarks marks nothing. Safe for concurrent use (the execution
// functions of one render share it through its context).
type AggregateMarks struct {
	mu    sync.Mutex
	maps  map[*payload.Map]bool
	lists map[*any]bool
	// jlists are the template engine's lists (copies Transfer made)
	jlists map[*jinja.List]bool
}

// NewAggregateMarks returns an empty record (its maps are made by the
// first Mark).
func NewAggregateMarks() *AggregateMarks { return &AggregateMarks{} }

// aggMarksKey is the context key of WithAggregateMarks.
type aggMarksKey struct{}

// WithAggregateMarks returns ctx carrying m: the execution functions a
// template calls (slsutil.renderer, slsutil.merge) share it, so a value
// one of them rendered with yamlex keeps its !aggregate marks in the
// others, as Salt's AggregatedMap keeps its class between calls.
func WithAggregateMarks(ctx context.Context, m *AggregateMarks) context.Context {
	if AggregateMarksFrom(ctx) == m {
		return ctx
	}
	return context.WithValue(ctx, aggMarksKey{}, m)
}

// AggregateMarksFrom returns the marks ctx carries, or nil.
func AggregateMarksFrom(ctx context.Context) *AggregateMarks {
	m, _ := ctx.Value(aggMarksKey{}).(*AggregateMarks)
	return m
}

// EnsureAggregateMarks returns ctx carrying the marks of a render with
// rc: rc.Aggregates when set, else those ctx already carries, else a new
// record.
func EnsureAggregateMarks(ctx context.Context, rc *Context) context.Context {
	if rc != nil && rc.Aggregates != nil {
		return WithAggregateMarks(ctx, rc.Aggregates)
	}
	if AggregateMarksFrom(ctx) != nil {
		return ctx
	}
	return WithAggregateMarks(ctx, NewAggregateMarks())
}

// Mark records v (a *payload.Map, or a []any with a backing array of its
// own) as an aggregate.
func (m *AggregateMarks) Mark(v any) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.maps == nil {
		m.maps, m.lists, m.jlists = map[*payload.Map]bool{}, map[*any]bool{}, map[*jinja.List]bool{}
	}
	switch x := v.(type) {
	case *jinja.List:
		if x != nil {
			m.jlists[x] = true
		}
	case *payload.Map:
		if x != nil {
			m.maps[x] = true
		}
	case []any:
		if cap(x) > 0 {
			m.lists[unsafe.SliceData(x)] = true
		}
	}
}

// Marked reports whether v was recorded by Mark.
func (m *AggregateMarks) Marked(v any) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch x := v.(type) {
	case *payload.Map:
		return m.maps[x]
	case []any:
		return cap(x) > 0 && m.lists[unsafe.SliceData(x)]
	case *jinja.List:
		return m.jlists[x]
	}
	return false
}

// maxTransferDepth bounds Transfer's walk (jinja.Import's own limit).
const maxTransferDepth = 1000

// Transfer marks in to the copies of from's marked maps and lists: to is
// a copy of from with the same shape (jinja.Import or jinja.Export of
// it: maps item for item, lists element for element), so a value crossing
// between the template engine and an execution function stays an
// aggregate, as the same Python object does in Salt. It does nothing
// when nothing is marked.
func (m *AggregateMarks) Transfer(from, to any) {
	if m == nil {
		return
	}
	m.mu.Lock()
	empty := len(m.maps)+len(m.lists)+len(m.jlists) == 0
	m.mu.Unlock()
	if empty {
		return
	}
	m.transfer(from, to, 0)
}

func (m *AggregateMarks) transfer(from, to any, depth int) {
	if depth > maxTransferDepth {
		return
	}
	if m.Marked(from) {
		m.Mark(to)
	}
	switch f := from.(type) {
	case *payload.Map:
		t, ok := to.(*payload.Map)
		if !ok || f == nil || t == nil || f.Len() != t.Len() {
			return
		}
		fi, ti := f.Items(), t.Items()
		for i := range fi {
			m.transfer(fi[i].Value, ti[i].Value, depth+1)
		}
	case []any:
		m.transferList(f, to, depth)
	case *jinja.List:
		if f != nil {
			m.transferList(f.Items, to, depth)
		}
	case jinja.Tuple:
		m.transferList(f, to, depth)
	}
}

// transferList walks the elements of a list and its copy.
func (m *AggregateMarks) transferList(f []any, to any, depth int) {
	var t []any
	switch x := to.(type) {
	case []any:
		t = x
	case *jinja.List:
		if x != nil {
			t = x.Items
		}
	case jinja.Tuple:
		t = x
	}
	if len(t) != len(f) {
		return
	}
	for i := range f {
		m.transfer(f[i], t[i], depth+1)
	}
}
