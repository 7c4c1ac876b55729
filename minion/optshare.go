package minion

import (
	"github.com/gsalt/gsalt/wire/payload"
)

// OptionShare lets the identities of one process whose configurations are
// alike (a proxy's devices, each loading the same files with its own id)
// share the memory of their options map (__opts__) through
// payload.Sharer: the first identity's options become the reference; a
// later identity's options read exactly as its own and share every part
// equal to the reference's (a map with the reference's keys in its order
// is a copy of the reference's entries sharing its lookup index). Options
// maps are never modified after they are built, which makes the sharing
// safe. The zero value is ready; safe for concurrent use.
type OptionShare struct {
	s payload.Sharer
}

// share returns own, or an equal map that shares memory with the reference.
func (s *OptionShare) share(own *payload.Map) *payload.Map {
	if m, ok := s.s.Share(own).(*payload.Map); ok {
		return m
	}
	return own
}
