package states

import (
	"sync"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Accumulators is one state run's file.accumulated data (Salt keeps it in
// a file per State instance): for each target file, the accumulator
// names with their text chunks, and the IDs each accumulator was
// required by. Safe for concurrent use (parallel: True states).
type Accumulators struct {
	mu   sync.Mutex
	data map[string]*payload.Map // filename → name → []any
	deps map[string]*payload.Map // filename → name → []any (state IDs)
}

// Add appends the chunks not yet present to the accumulator name of
// filename, records deps, and reports whether a chunk was added.
func (a *Accumulators) Add(filename, name string, chunks, deps []any) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.data == nil {
		a.data, a.deps = map[string]*payload.Map{}, map[string]*payload.Map{}
	}
	if a.data[filename] == nil {
		a.data[filename], a.deps[filename] = &payload.Map{}, &payload.Map{}
	}
	d := a.deps[filename]
	old, _ := d.Get(name)
	dl, _ := old.([]any)
	d.Set(name, append(dl, deps...))
	cur, _ := a.data[filename].Get(name)
	list, _ := cur.([]any)
	added := false
	for _, ch := range chunks {
		dup := false
		for _, x := range list {
			if pyfmt.Equal(x, ch) {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, ch)
			added = true
		}
	}
	a.data[filename].Set(name, list)
	return added
}

// Get returns copies of filename's accumulators and their deps, or nils.
func (a *Accumulators) Get(filename string) (data, deps *payload.Map) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.data[filename] == nil {
		return nil, nil
	}
	return payload.DeepClone(a.data[filename]).(*payload.Map), payload.DeepClone(a.deps[filename]).(*payload.Map)
}
