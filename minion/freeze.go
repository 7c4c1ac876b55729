package minion

import "github.com/gsalt/gsalt/wire/payload"

// freezeProbe is a key no real map holds.
const freezeProbe = "\x00gsalt-freeze-probe"

// freeze prepares a value tree for concurrent readers. payload.Map builds
// its lookup index lazily, on the first miss in a map of more than 16
// entries, so two goroutines reading the same large map race on that
// write. Looking a missing key up once in every map builds all the indexes
// up front; afterwards lookups only read. Shared trees (options, grains,
// pillar) are frozen before other goroutines can see them and are never
// modified afterwards (they are replaced as a whole).
func freeze(v any) {
	freezeDepth(v, 0)
}

func freezeDepth(v any, depth int) {
	if depth > 512 {
		return
	}
	switch x := v.(type) {
	case *payload.Map:
		x.Get(freezeProbe)
		for _, it := range x.Items() {
			freezeDepth(it.Value, depth+1)
		}
	case []any:
		for _, e := range x {
			freezeDepth(e, depth+1)
		}
	}
}
