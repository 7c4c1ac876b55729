package keys

import (
	"fmt"
	"sort"
	"strings"
)

// State is the state of a minion key, that is which pki_dir subdirectory
// holds it. StateLocal names the master's own *.pem/*.pub files, which
// salt-key -F lists as "Local Keys".
type State string

// Key states. Salt's salt-key calls pending keys "Unaccepted Keys" in its
// text output and "minions_pre" in --out json; State.Name and State.Title
// give those spellings.
const (
	StateAccepted State = "accepted"
	StatePending  State = "pending"
	StateRejected State = "rejected"
	StateDenied   State = "denied"
	StateLocal    State = "local"
)

// ManagedStates returns the four minion key states in the order Salt's
// Key.list_keys builds its result: accepted, pending, rejected, denied.
func ManagedStates() []State {
	return []State{StateAccepted, StatePending, StateRejected, StateDenied}
}

// Dir returns the pki_dir subdirectory of the state ("minions",
// "minions_pre", "minions_rejected", "minions_denied"), or "" for
// StateLocal and unknown states.
func (s State) Dir() string {
	switch s {
	case StateAccepted:
		return "minions"
	case StatePending:
		return "minions_pre"
	case StateRejected:
		return "minions_rejected"
	case StateDenied:
		return "minions_denied"
	}
	return ""
}

// Name returns the key Salt uses for the state in salt-key's result
// dictionaries and --out json: the directory name, or "local".
func (s State) Name() string {
	if s == StateLocal {
		return "local"
	}
	return s.Dir()
}

// Title returns the heading salt-key prints for the state:
// "Accepted Keys:", "Unaccepted Keys:", "Rejected Keys:", "Denied Keys:"
// or "Local Keys:".
func (s State) Title() string {
	switch s {
	case StateAccepted:
		return "Accepted Keys:"
	case StatePending:
		return "Unaccepted Keys:"
	case StateRejected:
		return "Rejected Keys:"
	case StateDenied:
		return "Denied Keys:"
	case StateLocal:
		return "Local Keys:"
	}
	return string(s) + ":"
}

// Valid reports whether s is one of the managed states or StateLocal.
func (s State) Valid() bool {
	return s.Dir() != "" || s == StateLocal
}

// StateForName maps a Salt status name ("minions", "minions_pre",
// "minions_rejected", "minions_denied", "local") back to a State.
func StateForName(name string) (State, bool) {
	for _, s := range []State{StateAccepted, StatePending, StateRejected, StateDenied, StateLocal} {
		if s.Name() == name {
			return s, true
		}
	}
	return "", false
}

// ParseListArg interprets a salt-key --list argument like Salt: a prefix of
// "acc" (accepted), "pre" or "un" (pending), "rej" (rejected), "den"
// (denied) selects one state; "all" selects every managed state (all is
// then true). Anything else wraps ErrBadListArg.
func ParseListArg(arg string) (state State, all bool, err error) {
	switch {
	case strings.HasPrefix(arg, "acc"):
		return StateAccepted, false, nil
	case strings.HasPrefix(arg, "pre"), strings.HasPrefix(arg, "un"):
		return StatePending, false, nil
	case strings.HasPrefix(arg, "rej"):
		return StateRejected, false, nil
	case strings.HasPrefix(arg, "den"):
		return StateDenied, false, nil
	case strings.HasPrefix(arg, "all"):
		return "", true, nil
	}
	return "", false, fmt.Errorf("%w: %q", ErrBadListArg, arg)
}

// Act is the "act" value of salt/key and salt/auth events.
type Act string

// Event acts. Accept, reject and delete appear in salt/key events and as
// salt-key actions; all but delete appear in salt/auth events.
const (
	ActAccept Act = "accept"
	ActReject Act = "reject"
	ActDelete Act = "delete"
	ActPend   Act = "pend"
	ActDenied Act = "denied"
	ActFull   Act = "full"
)

// Include selects the extra states a glob accept or reject acts on, like
// salt-key's --include-accepted, --include-rejected and --include-denied.
// Accept always acts on pending keys, plus Rejected and Denied ones when
// set (Accepted is ignored). Reject always acts on pending keys, plus
// Accepted and Denied ones when set (Rejected is ignored). Delete acts on
// every state and ignores Include.
type Include struct {
	Accepted bool
	Rejected bool
	Denied   bool
}

// CLIInclude returns the Include salt-key uses for act given its command
// line flags (KeyCLI._update_opts): for accept, --include-all implies
// --include-rejected and accepted keys are never included; for reject,
// --include-all implies --include-accepted and rejected keys are never
// included; delete keeps the flags as given (they only change its "does
// not match" message).
func CLIInclude(act Act, includeAll, includeAccepted, includeRejected, includeDenied bool) Include {
	inc := Include{Accepted: includeAccepted, Rejected: includeRejected, Denied: includeDenied}
	switch act {
	case ActAccept:
		inc.Rejected = includeAll || includeRejected
		inc.Accepted = false
	case ActReject:
		inc.Accepted = includeAll || includeAccepted
		inc.Rejected = false
	}
	return inc
}

// Group is one entry of a salt-key result dictionary: a state and its
// minion ids. When Values is nil the group is a list (salt-key -L, glob
// matches); otherwise Values runs parallel to IDs and the group is a
// dictionary id → value (fingerprints, key text). Use a non-nil empty
// Values for an empty dictionary.
type Group struct {
	State  State
	IDs    []string
	Values []string
}

// IsDict reports whether the group is a dictionary (Values set).
func (g Group) IsDict() bool { return g.Values != nil }

// Listing is an ordered salt-key result dictionary (state → ids or
// id → value). Its order is the order Salt builds the dictionary in, which
// --out json shows; the text output sorts it.
type Listing []Group

// Get returns the ids of state s (nil when the listing has no such group).
func (l Listing) Get(s State) []string {
	for _, g := range l {
		if g.State == s {
			return g.IDs
		}
	}
	return nil
}

// Has reports whether the listing has a group for state s.
func (l Listing) Has(s State) bool {
	for _, g := range l {
		if g.State == s {
			return true
		}
	}
	return false
}

// Value returns the value for id in the dictionary group of state s.
func (l Listing) Value(s State, id string) (string, bool) {
	for _, g := range l {
		if g.State != s || g.Values == nil {
			continue
		}
		for i, k := range g.IDs {
			if k == id && i < len(g.Values) {
				return g.Values[i], true
			}
		}
	}
	return "", false
}

// Map returns the listing as a map of state to ids (copies).
func (l Listing) Map() map[State][]string {
	m := make(map[State][]string, len(l))
	for _, g := range l {
		m[g.State] = append([]string(nil), g.IDs...)
	}
	return m
}

// Empty reports whether the listing has no groups.
func (l Listing) Empty() bool { return len(l) == 0 }

// Count returns the number of ids over all groups.
func (l Listing) Count() int {
	n := 0
	for _, g := range l {
		n += len(g.IDs)
	}
	return n
}

// ListingOf builds a Listing from a state map in Salt's canonical order
// (accepted, pending, rejected, denied, local). Every state present in m
// gets a group, even with no ids; ids are sorted like Salt's
// sorted_ignorecase.
func ListingOf(m map[State][]string) Listing {
	var l Listing
	for _, s := range append(ManagedStates(), StateLocal) {
		ids, ok := m[s]
		if !ok {
			continue
		}
		ids = append([]string(nil), ids...)
		sortIgnoreCase(ids)
		if ids == nil {
			ids = []string{}
		}
		l = append(l, Group{State: s, IDs: ids})
	}
	return l
}

// Filter narrows glob matches to what salt-key acts on (KeyCLI._filter_ret):
// for accept and reject, pending keys always, then accepted, rejected and
// denied keys when inc includes them (in that order, which is the order
// salt-key later reports the keys in). Delete keeps every group. Empty
// accepted, rejected and denied groups are dropped.
func (l Listing) Filter(act Act, inc Include) Listing {
	if act == ActDelete {
		return l
	}
	var out Listing
	add := func(s State, want bool) {
		if !want {
			return
		}
		for _, g := range l {
			if g.State == s && len(g.IDs) > 0 {
				out = append(out, g)
				return
			}
		}
	}
	// Salt keeps the pending group even when it is empty.
	for _, g := range l {
		if g.State == StatePending {
			out = append(out, g)
			break
		}
	}
	add(StateAccepted, inc.Accepted)
	add(StateRejected, inc.Rejected)
	add(StateDenied, inc.Denied)
	return out
}

// sortIgnoreCase sorts like Salt's salt.utils.data.sorted_ignorecase (by
// lower case). Salt's order among names equal ignoring case is the
// directory order; here they are ordered by code point.
func sortIgnoreCase(ids []string) {
	sort.SliceStable(ids, func(i, j int) bool {
		li, lj := strings.ToLower(ids[i]), strings.ToLower(ids[j])
		if li != lj {
			return li < lj
		}
		return ids[i] < ids[j]
	})
}
