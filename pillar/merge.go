package pillar

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxMergeDepth bounds the recursion of a merge (pillar data comes from
// YAML, whose depth the renderer already limits).
const maxMergeDepth = 512

// Merge merges b into a with a pillar_source_merging_strategy, like
// salt.utils.dictupdate.merge: "smart" is "aggregate" when the renderer
// pipeline ends in yamlex and "recurse" otherwise; "recurse" deep-copies a
// and updates it recursively with b (lists replaced, or with mergeLists
// extended by the items of b not already present); "overwrite" replaces
// a's top-level keys with b's; "aggregate" updates the top level, keeping
// nested values of b (Merge sees no yamlex aggregation marks; a compile's
// merges do, see aggregateDeep);
// "list" keeps only a's keys, turning keys present in both into
// [a value, b value]; "none" is "recurse" without list merging. Unknown
// strategies fall back to "recurse" with a warning.
//
// Like Salt, "overwrite" also changes a's top level in place, and values
// taken from b are shared with the result, not copied.
func Merge(a, b *payload.Map, strategy, renderer string, mergeLists bool) *payload.Map {
	m, _ := mergeAny(a, b, strategy, renderer, mergeLists, nil, nil)
	mm, _ := m.(*payload.Map)
	if mm == nil {
		mm = payload.NewMap()
	}
	return mm
}

// MergeMarked is Merge over any two values with the aggregates marks
// records (the yamlex renderer's !aggregate values; nil for none), as
// slsutil.merge merges data a template rendered: it fails where Python's
// dictupdate.merge raises (ErrMerge), and the aggregate strategy's results
// are marked as Salt's keep their aggregation classes.
func MergeMarked(a, b any, strategy, renderer string, mergeLists bool, marks *render.AggregateMarks) (any, error) {
	return mergeAny(a, b, strategy, renderer, mergeLists, nil, marks)
}

// errMerge is Python's TypeError from dictupdate.update on non-dicts.
func errMerge(a, b any) error {
	return fmt.Errorf("%w: cannot update using non-dict types (%s, %s)", ErrMerge, payload.TypeName(a), payload.TypeName(b))
}

// mergeAny is dictupdate.merge over arbitrary values; it fails where
// Python would raise (a non-mapping under recurse/overwrite/list). marks
// are the aggregates of the data (yamlex's !aggregate values; nil for
// none), which the aggregate strategy merges as Salt does.
func mergeAny(a, b any, strategy, renderer string, mergeLists bool, log *slog.Logger, marks *render.AggregateMarks) (any, error) {
	if strategy == StrategySmart {
		parts := strings.Split(renderer, "|")
		if parts[len(parts)-1] == "yamlex" || strings.HasPrefix(renderer, "yamlex_") {
			strategy = StrategyAggregate
		} else {
			strategy = StrategyRecurse
		}
	}
	switch strategy {
	case StrategyList:
		am, aok := a.(*payload.Map)
		bm, bok := b.(*payload.Map)
		if !aok || !bok {
			return nil, errMerge(a, b)
		}
		out := payload.NewMap()
		for _, it := range am.Items() {
			if bv, ok := bm.GetKey(it.Key); ok {
				out.SetKey(it.Key, []any{it.Value, bv})
			} else {
				out.SetKey(it.Key, it.Value)
			}
		}
		return out, nil
	case StrategyRecurse:
		return mergeRecurse(a, b, mergeLists)
	case StrategyAggregate:
		return aggregateTop(a, b, marks), nil
	case StrategyOverwrite:
		am, aok := a.(*payload.Map)
		bm, bok := b.(*payload.Map)
		if !aok || !bok {
			return nil, errMerge(a, b)
		}
		for _, it := range bm.Items() {
			if _, ok := am.GetKey(it.Key); ok {
				am.SetKey(it.Key, it.Value)
			}
		}
		return mergeRecurse(am, bm, mergeLists)
	case StrategyNone:
		return mergeRecurse(a, b, false)
	}
	if log != nil {
		log.Warn(fmt.Sprintf("Unknown merging strategy '%s', fallback to recurse", strategy))
	}
	return mergeRecurse(a, b, false)
}

// mergeRecurse is dictupdate.merge_recurse: update(deepcopy(a), b).
func mergeRecurse(a, b any, mergeLists bool) (any, error) {
	am, aok := a.(*payload.Map)
	bm, bok := b.(*payload.Map)
	if !aok || !bok || am == nil || bm == nil {
		return nil, errMerge(a, b)
	}
	dest := payload.DeepClone(am).(*payload.Map)
	update(dest, bm, mergeLists, 0)
	return dest, nil
}

// update is dictupdate.update on maps dest owns.
func update(dest, upd *payload.Map, mergeLists bool, depth int) {
	for _, it := range upd.Items() {
		cur, _ := dest.GetKey(it.Key)
		switch d := cur.(type) {
		case *payload.Map:
			if u, ok := it.Value.(*payload.Map); ok && d != nil && u != nil && depth < maxMergeDepth {
				update(d, u, mergeLists, depth+1)
				dest.SetKey(it.Key, d)
				continue
			}
		case []any:
			if u, ok := it.Value.([]any); ok {
				if mergeLists {
					merged := payload.DeepClone(d).([]any)
					for _, x := range u {
						if !containsPy(merged, x) {
							merged = append(merged, x)
						}
					}
					dest.SetKey(it.Key, merged)
				} else {
					dest.SetKey(it.Key, u)
				}
				continue
			}
		}
		dest.SetKey(it.Key, it.Value)
	}
}

func containsPy(l []any, x any) bool {
	for _, e := range l {
		if py.Equal(e, x) {
			return true
		}
	}
	return false
}

// aggregateTop is dictupdate.merge_aggregate (yamlex merge_recursive with
// level 1): both top-level maps are marked, so the result starts from a
// and takes every key of b; below the top level only the values marks
// records are aggregates (see aggregateDeep).
func aggregateTop(a, b any, marks *render.AggregateMarks) any {
	am, aok := a.(*payload.Map)
	if !aok {
		if a == nil {
			am = payload.NewMap()
		} else if l, ok := a.([]any); ok {
			return aggregateList(l, b)
		} else {
			return aggregateList([]any{a}, b)
		}
	}
	bm, bok := b.(*payload.Map)
	if !bok {
		// A marked map against a marked sequence: Python keeps obj_b.
		return b
	}
	out := am.Clone()
	// Python's result is a copy of the marked obj_a: an aggregate itself
	marks.Mark(out)
	for _, it := range bm.Items() {
		v := it.Value
		if av, ok := am.GetKey(it.Key); ok {
			v = aggregateDeep(av, v, 0, marks)
		}
		out.SetKey(it.Key, v)
	}
	return out
}

// aggregateList merges two marked sequences (only reachable when a pillar
// source is not a mapping).
func aggregateList(a []any, b any) any {
	bl, ok := b.([]any)
	if !ok {
		if _, isMap := b.(*payload.Map); isMap {
			return b
		}
		bl = []any{b}
	}
	out := append([]any(nil), a...)
	for _, x := range bl {
		if !containsPy(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// aggregateDeep is aggregation.aggregate below the first level (level
// False): two aggregate maps start from a, other maps from b, and both
// take b's keys with common ones aggregated; two aggregate lists are
// joined without repeating a's items; anything else is b. Results keep
// the mark of the value they copy, as Python's copy.copy keeps the class.
func aggregateDeep(a, b any, depth int, marks *render.AggregateMarks) any {
	if depth >= maxMergeDepth {
		return b
	}
	am, aok := a.(*payload.Map)
	bm, bok := b.(*payload.Map)
	if aok && bok && am != nil && bm != nil {
		bothMarked := marks.Marked(am) && marks.Marked(bm)
		out := bm.Clone()
		if bothMarked {
			out = am.Clone()
		}
		if bothMarked || marks.Marked(bm) {
			marks.Mark(out)
		}
		for _, it := range bm.Items() {
			v := it.Value
			if av, ok := am.GetKey(it.Key); ok {
				v = aggregateDeep(av, v, depth+1, marks)
			}
			out.SetKey(it.Key, v)
		}
		return out
	}
	if al, ok := a.([]any); ok && marks.Marked(al) {
		if bl, ok := b.([]any); ok && marks.Marked(bl) {
			out := aggregateList(al, bl).([]any)
			out = append(make([]any, 0, max(len(out), 1)), out...)
			marks.Mark(out)
			return out
		}
	}
	return b
}
