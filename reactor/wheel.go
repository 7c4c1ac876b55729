package reactor

import (
	"context"

	"github.com/gsalt/gsalt/wire/payload"
)

// WheelClient runs the wheel functions of wheel reactions; *master.Master
// satisfies it. RunWheel fires salt/wheel/<jid>/new and ret with the given
// user and returns the ret event data (Salt's WheelClient.low).
type WheelClient interface {
	RunWheel(ctx context.Context, fun string, args []any, kwargs *payload.Map, user string) *payload.Map
}

// runWheel runs a wheel reaction as user "Reactor".
func (r *Reactor) runWheel(rx *Reaction) {
	if r.o.Wheel == nil {
		r.st.failed.Add(1)
		r.log.Error("wheel reaction not run: this master has no wheel client (wheel functions are not available)",
			"reaction", rx.ID, "fun", rx.Fun)
		return
	}
	r.st.wheel.Add(1)
	ret := r.o.Wheel.RunWheel(r.ctx, rx.Fun, rx.Arg, rx.Kwarg, rx.User)
	r.logReturn(rx, ret)
}
