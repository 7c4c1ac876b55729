package render

import (
	"unsafe"

	"github.com/gsalt/gsalt/wire/payload"
)

// AggregateMarks records the maps and lists a renderer made
// salt.utils.aggregation aggregates (the yamlex renderer's !aggregate
// values: Salt's AggregatedMap and AggregatedSequence), so a caller
// merging the data with Salt's "aggregate" strategy treats them as Salt
// does. Values are recorded by identity: a copy is not marked. A nil
// *AggregateMarks marks nothing. Not safe for concurrent use.
type AggregateMarks struct {
	maps  map[*payload.Map]bool
	lists map[*any]bool
}

// NewAggregateMarks returns an empty record.
func NewAggregateMarks() *AggregateMarks {
	return &AggregateMarks{maps: map[*payload.Map]bool{}, lists: map[*any]bool{}}
}

// Mark records v (a *payload.Map, or a []any with a backing array of its
// own) as an aggregate.
func (m *AggregateMarks) Mark(v any) {
	if m == nil {
		return
	}
	switch x := v.(type) {
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
	switch x := v.(type) {
	case *payload.Map:
		return m.maps[x]
	case []any:
		return cap(x) > 0 && m.lists[unsafe.SliceData(x)]
	}
	return false
}
