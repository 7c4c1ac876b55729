package builtin

import (
	"fmt"
	"github.com/gsalt/gsalt/internal/py"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// errDictUpdate is the TypeError of salt.utils.dictupdate.update on
// non-dicts.
var errDictUpdate = fmt.Errorf("%w: Cannot update using non-dict types in dictupdate.update()", modules.ErrArguments)

// maxUpdateDepth bounds dictUpdate's recursion.
const maxUpdateDepth = 512

// dictUpdate is salt.utils.dictupdate.update: upd is merged into dest in
// place (nested maps of dest are updated in place too) and dest returned.
// Lists are replaced, or with mergeLists extended by the items of upd not
// already present. recursive false is dict.update.
func dictUpdate(destV, updV any, recursive, mergeLists bool) (*payload.Map, error) {
	dest, ok1 := destV.(*payload.Map)
	upd, ok2 := updV.(*payload.Map)
	if !ok1 || !ok2 || dest == nil || upd == nil {
		return nil, errDictUpdate
	}
	dictUpdateDepth(dest, upd, recursive, mergeLists, 0)
	return dest, nil
}

func dictUpdateDepth(dest, upd *payload.Map, recursive, mergeLists bool, depth int) {
	if !recursive || depth > maxUpdateDepth {
		for _, it := range upd.Items() {
			dest.SetKey(it.Key, it.Value)
		}
		return
	}
	for _, it := range upd.Items() {
		cur, _ := dest.GetKey(it.Key)
		switch d := cur.(type) {
		case *payload.Map:
			if u, ok := it.Value.(*payload.Map); ok && d != nil && u != nil {
				dictUpdateDepth(d, u, true, mergeLists, depth+1)
				continue
			}
		case []any:
			if u, ok := it.Value.([]any); ok && mergeLists {
				merged := payload.DeepClone(d).([]any)
				for _, x := range u {
					found := false
					for _, e := range merged {
						if py.Equal(e, x) {
							found = true
							break
						}
					}
					if !found {
						merged = append(merged, x)
					}
				}
				dest.SetKey(it.Key, merged)
				continue
			}
		}
		dest.SetKey(it.Key, it.Value)
	}
}

// dictMerge is salt.utils.dictupdate.merge with a merge strategy (smart,
// recurse, aggregate, overwrite, list, none).
func dictMerge(a, b any, strategy, renderer string, mergeLists bool, marks *render.AggregateMarks) (any, error) {
	am, ok1 := a.(*payload.Map)
	bm, ok2 := b.(*payload.Map)
	if !ok1 || !ok2 || am == nil || bm == nil {
		if strategy == pillar.StrategyList {
			return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'items'", payload.TypeName(a))
		}
		return nil, errDictUpdate
	}
	out, _ := pillar.MergeMarked(am, bm, strategy, renderer, mergeLists, marks)
	if _, ok := out.(*payload.Map); !ok {
		out = payload.NewMap()
	}
	return out, nil
}

// argsBool is a parameter's Python truthiness.
func argsBool(c *modules.Call, name string) bool { return payload.Truthy(c.Args.Get(name)) }

// MergeRecurse is salt.utils.dictupdate.merge_recurse(a, b): a deep copy
// of a with b merged in recursively (lists replaced); an error when
// either is not a dict.
func MergeRecurse(a, b any) (any, error) {
	return dictUpdate(payload.DeepClone(a), b, true, false)
}
