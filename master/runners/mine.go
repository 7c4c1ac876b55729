package runners

import (
	"context"
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/wire/payload"
)

// MineEnv is the part of the master the mine runners need besides Env: the
// mine data the master keeps per minion.
type MineEnv interface {
	// MineGet returns the mine data of the minions tgt/tgtType matches for
	// fun (a name, a comma-separated list or a list), as
	// RemoteFuncs._mine_get answers it with the master as requester.
	MineGet(ctx context.Context, tgt, fun any, tgtType string) (*payload.Map, error)
}

// ErrNoMine is returned when the master offers no mine access.
var ErrNoMine = errors.New("runners: the master keeps no mine data")

// mineRunners is Salt's mine runner (salt/runners/mine.py).
func mineRunners() []Runner {
	return []Runner{
		{Name: "mine.get", Fn: mineGet, Params: []Param{
			{Name: "tgt", Required: true}, {Name: "fun", Required: true}, {Name: "tgt_type", Default: "glob"},
		}, Doc: "Gathers the data from the specified minions' mine, pass in the target,\nfunction to look up and the target type\n\nCLI Example:\n\n    salt-run mine.get '*' network.interfaces"},
		{Name: "mine.update", Fn: mineUpdate, Params: []Param{
			{Name: "tgt", Required: true}, {Name: "tgt_type", Default: "glob"}, {Name: "clear", Default: false},
			{Name: "mine_functions"},
		}, Doc: "Update the mine data on a certain group of minions.\n\nCLI Example:\n\n    salt-run mine.update '*'"},
	}
}

func mineGet(ctx context.Context, c *Call) (any, error) {
	me, ok := c.Env.(MineEnv)
	if !ok {
		return nil, ErrNoMine
	}
	return me.MineGet(ctx, c.Args["tgt"], c.Args["fun"], payload.Text(c.Args["tgt_type"]))
}

// mineUpdate publishes mine.update to the target and returns each minion's
// answer, like salt.execute.
func mineUpdate(ctx context.Context, c *Call) (any, error) {
	kw := payload.NewMap("__kwarg__", true, "clear", c.Args["clear"], "mine_functions", c.Args["mine_functions"])
	res, err := c.Env.RunJob(ctx, Job{Tgt: c.Args["tgt"], TgtType: payload.Text(c.Args["tgt_type"]), Fun: "mine.update", Arg: []any{kw}})
	if errors.Is(err, ErrNoMinions) {
		return payload.NewMap(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("mine.update: %w", err)
	}
	out := payload.NewMap()
	for _, id := range res.Minions {
		if r, ok := res.Returns[id]; ok {
			v, _ := r.Get("return")
			out.Set(id, v)
		}
	}
	return out, nil
}
