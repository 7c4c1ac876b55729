package master

import (
	"context"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

var (
	_ runners.FileServerEnv   = (*runnerEnv)(nil)
	_ runners.EventEnv        = (*runnerEnv)(nil)
	_ runners.TargetEnv       = (*runnerEnv)(nil)
	_ runners.EventRequestEnv = (*runnerEnv)(nil)
)

// FileServer implements runners.FileServerEnv with the master's file
// server.
func (e *runnerEnv) FileServer(ctx context.Context, cmd string, load *payload.Map) (any, error) {
	return e.m.fs.Handle(ctx, cmd, load)
}

// FireEvent implements runners.EventEnv: the event goes on the master bus
// (and so to the IPC event publisher and the reactor).
func (e *runnerEnv) FireEvent(tag string, data *payload.Map) error {
	return e.m.bus.Fire(event.Event{Tag: tag, Data: data})
}

// CheckMinions implements runners.TargetEnv over the accepted keys and the
// minion data cache, like a publish computes its expected minions.
func (e *runnerEnv) CheckMinions(tgt any, tgtType string) ([]string, error) {
	if tgtType == "" {
		tgtType = "glob"
	}
	ids, _, err := e.m.checkMinions(tgt, tgtType, ":", true)
	return ids, err
}

// RequestEvent implements runners.EventRequestEnv: it listens for reply,
// fires data under tag on the master bus and waits for the reply event.
func (e *runnerEnv) RequestEvent(ctx context.Context, tag string, data *payload.Map, reply string, timeout time.Duration) (*payload.Map, error) {
	sub := e.m.bus.Subscribe(event.MatchFunc(func(t string) bool { return t == reply }), 16)
	defer sub.Close()
	if err := e.m.bus.Fire(event.Event{Tag: tag, Data: data}); err != nil {
		return nil, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case ev, ok := <-sub.C():
		if !ok {
			return nil, runners.ErrNoEvents
		}
		return ev.Data, nil
	case <-timer.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// MasterKey implements runners.EventRequestEnv: the root user's client key.
func (e *runnerEnv) MasterKey() string { return e.m.clientKeys["root"] }
