package reactor

import (
	"context"

	"github.com/gsalt/gsalt/wire/payload"
)

// RunnerClient runs the runner functions of runner reactions;
// *master.Master satisfies it. RunRunner fires salt/run/<jid>/new and
// salt/run/<jid>/ret with the given user, stores the return in the job
// cache and returns the ret event data (jid "" allocates one).
type RunnerClient interface {
	RunRunner(ctx context.Context, jid, fun string, args []any, kwargs *payload.Map, user string) *payload.Map
}

// runRunner runs a runner reaction as user "Reactor" (the reactor ignores
// the events of those runs).
func (r *Reactor) runRunner(rx *Reaction, chain []string) {
	if r.o.Runner == nil {
		r.st.failed.Add(1)
		r.log.Error("runner reaction not run: no runner client", "reaction", rx.ID, "fun", rx.Fun)
		return
	}
	r.st.runner.Add(1)
	ret := r.o.Runner.RunRunner(r.ctx, r.jid("", chain), rx.Fun, rx.Arg, rx.Kwarg, rx.User)
	r.logReturn(rx, ret)
}

// logReturn logs the outcome of a runner or wheel reaction.
func (r *Reactor) logReturn(rx *Reaction, ret *payload.Map) {
	if ret == nil {
		return
	}
	if s, ok := ret.Get("success"); ok && s == false {
		r.log.Warn("reaction completed unsuccessfully", "type", rx.Type, "reaction", rx.ID, "fun", rx.Fun, "jid", ret.Str("jid"))
		return
	}
	r.log.Debug("reaction completed", "type", rx.Type, "reaction", rx.ID, "fun", rx.Fun, "jid", ret.Str("jid"))
}
