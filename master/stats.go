package master

import (
	"sync/atomic"

	"github.com/gsalt/gsalt/master/keys"
)

// Outcomes of _auth requests counted in Stats.Auth (Salt's salt/auth
// event "act": accept, pend, reject, denied for a key that differs from
// the stored one, full for max_minions).
const (
	AuthAccepted = "accepted"
	AuthPending  = "pending"
	AuthRejected = "rejected"
	AuthDenied   = "denied"
	AuthFull     = "full"
)

// AuthOutcomes lists the outcomes in a stable order.
var AuthOutcomes = []string{AuthAccepted, AuthPending, AuthRejected, AuthDenied, AuthFull}

// Stats are the master's counters since New, for the metrics endpoint.
type Stats struct {
	// JobsPublished counts jobs sent on the publish port.
	JobsPublished uint64
	// ReturnsReceived counts _return loads accepted (stored and fired).
	ReturnsReceived uint64
	// Auth counts _auth decisions by outcome (AuthOutcomes).
	Auth map[string]uint64
	// SlowLoadCommits counts publishes answered before the job cache had
	// committed their load (it took longer than loadCommitWait).
	SlowLoadCommits uint64
}

// counters are incremented where the counted things happen.
type counters struct {
	published, returns atomic.Uint64
	slowLoadCommits    atomic.Uint64
	auth               [5]atomic.Uint64 // indexed like AuthOutcomes
}

// authResult counts a decision of the key store.
func (c *counters) authResult(dec keys.AuthDecision) {
	i := 2 // rejected
	switch act, _ := dec.Event["act"].(string); {
	case act == string(keys.ActDenied):
		i = 3
	case dec.Result == keys.AuthAccept:
		i = 0
	case dec.Result == keys.AuthPending:
		i = 1
	case dec.Result == keys.AuthFull:
		i = 4
	}
	c.auth[i].Add(1)
}

// Stats returns the counters.
func (m *Master) Stats() Stats {
	s := Stats{JobsPublished: m.st.published.Load(), ReturnsReceived: m.st.returns.Load(), Auth: map[string]uint64{},
		SlowLoadCommits: m.st.slowLoadCommits.Load()}
	for i, o := range AuthOutcomes {
		s.Auth[o] = m.st.auth[i].Load()
	}
	return s
}
