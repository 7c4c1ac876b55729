package master

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/master/wheel"
	sbuiltin "github.com/gsalt/gsalt/states/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxOrchestrationDepth bounds runners started by the salt.runner states
// of an orchestration inside each other (an orchestration that runs
// itself would otherwise never end).
const maxOrchestrationDepth = 16

// watchQueue is the event queue of a wait_for_event subscription.
const watchQueue = 4096

// ErrOrchestrationDepth is returned when salt.runner states nest runners
// deeper than maxOrchestrationDepth.
var ErrOrchestrationDepth = errors.New("master: orchestrations nested too deeply")

var (
	_ runners.OrchestrateEnv = (*runnerEnv)(nil)
	_ sbuiltin.MasterClient  = (*orchClient)(nil)
)

// orchDepthKey is the context key counting nested runner calls.
type orchDepthKey struct{}

// MasterClient implements runners.OrchestrateEnv: the client the salt.*
// states of an orchestration run by user reach this master through.
func (e *runnerEnv) MasterClient(user string) sbuiltin.MasterClient {
	return &orchClient{m: e.m, user: user}
}

// orchClient is the master as the salt.* states see it (Salt's
// saltutil.cmd, saltutil.runner and saltutil.wheel on the master, and its
// event bus).
type orchClient struct {
	m    *Master
	user string
}

// RunJob implements sbuiltin.MasterClient over Master.RunJob; a target
// matching no minion gives an empty result. Returns are sorted by id.
func (o *orchClient) RunJob(ctx context.Context, job sbuiltin.MasterJob) (*sbuiltin.MasterJobResult, error) {
	user := o.user
	if user == "UNKNOWN" {
		user = ""
	}
	arg := job.Arg
	if arg == nil {
		arg = []any{}
	}
	res, err := o.m.RunJob(ctx, PublishRequest{Tgt: job.Tgt, TgtType: job.TgtType, Fun: job.Fun, Arg: arg,
		Ret: job.Ret, User: user, Kwargs: job.Kwargs}, job.Timeout, 0)
	if errors.Is(err, ErrNoMinions) {
		return &sbuiltin.MasterJobResult{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := &sbuiltin.MasterJobResult{JID: res.JID, Minions: res.Minions, Missing: res.Missing}
	ids := make([]string, 0, len(res.Returns))
	for id := range res.Returns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out.Returns = append(out.Returns, sbuiltin.MinionReturn{ID: id, Data: res.Returns[id].Clone()})
	}
	return out, nil
}

// RunRunner implements sbuiltin.MasterClient over Master.RunRunner (a new
// jid, the salt/run/<jid>/new and ret events, the job cache).
func (o *orchClient) RunRunner(ctx context.Context, fun string, args []any, kwargs *payload.Map, user string) (*payload.Map, error) {
	if _, ok := o.m.runReg.Lookup(fun); !ok {
		return nil, fmt.Errorf("%w: '%s'", sbuiltin.ErrMasterFunction, fun)
	}
	depth, _ := ctx.Value(orchDepthKey{}).(int)
	if depth >= maxOrchestrationDepth {
		return nil, fmt.Errorf("%w: %s at depth %d", ErrOrchestrationDepth, fun, depth)
	}
	ctx = context.WithValue(ctx, orchDepthKey{}, depth+1)
	return o.m.RunRunner(ctx, "", fun, args, kwargs, user), nil
}

// RunWheel implements sbuiltin.MasterClient over Master.RunWheel.
func (o *orchClient) RunWheel(ctx context.Context, fun string, args []any, kwargs *payload.Map, user string) (*payload.Map, error) {
	if _, ok := wheel.Default().Lookup(fun); !ok {
		return nil, fmt.Errorf("%w: '%s'", sbuiltin.ErrMasterFunction, fun)
	}
	return o.m.RunWheel(ctx, fun, args, kwargs, user), nil
}

// FunctionParams implements sbuiltin.MasterClient.
func (o *orchClient) FunctionParams(kind, fun string) ([]string, bool) {
	var params []runners.Param
	switch kind {
	case "runner":
		rn, ok := o.m.runReg.Lookup(fun)
		if !ok {
			return nil, false
		}
		params = rn.Params
	case "wheel":
		f, ok := wheel.Default().Lookup(fun)
		if !ok {
			return nil, false
		}
		params = f.Params
	default:
		return nil, false
	}
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p.Name
	}
	return out, true
}

// FireEvent implements sbuiltin.MasterClient: the event goes on the
// master bus.
func (o *orchClient) FireEvent(tag string, data *payload.Map) error {
	return o.m.bus.Fire(event.Event{Tag: tag, Data: data})
}

// WatchEvents implements sbuiltin.MasterClient with a bus subscription
// matching the tag glob.
func (o *orchClient) WatchEvents(ctx context.Context, pattern string) (<-chan sbuiltin.MasterEvent, func(), error) {
	match, err := event.Glob(pattern)
	if err != nil {
		return nil, nil, fmt.Errorf("master: wait_for_event pattern: %w", err)
	}
	sub := o.m.bus.Subscribe(match, watchQueue)
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan sbuiltin.MasterEvent)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C():
				if !ok {
					return
				}
				select {
				case out <- sbuiltin.MasterEvent{Tag: ev.Tag, Data: ev.Data}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, cancel, nil
}
