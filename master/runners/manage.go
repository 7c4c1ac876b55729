package runners

import (
	"context"
	"errors"
	"sort"

	"github.com/gsalt/gsalt/wire/payload"
)

var pingParams = []Param{
	{Name: "tgt", Default: "*"},
	{Name: "tgt_type", Default: "glob"},
	{Name: "timeout"},
	{Name: "gather_job_timeout"},
}

func manageRunners() []Runner {
	runners := []Runner{
		{Name: "manage.status", Fn: manageStatus,
			Params: append([]Param{{Name: "output", Default: true}}, pingParams...),
			Doc:    "Print the status of all known salt minions (pings them).\n\n    salt-run manage.status\n    salt-run manage.status tgt=\"webservers\" tgt_type=\"nodegroup\"\n    salt-run manage.status timeout=5 gather_job_timeout=10"},
		{Name: "manage.up", Fn: manageUp, Params: pingParams,
			Doc: "Print a list of all of the minions that are up.\n\n    salt-run manage.up\n    salt-run manage.up tgt=\"webservers\" tgt_type=\"nodegroup\""},
		{Name: "manage.down", Fn: manageDown,
			Params: append([]Param{{Name: "removekeys", Default: false}}, pingParams...),
			Doc:    "Print a list of all the down or unresponsive salt minions; optionally remove their keys.\n\n    salt-run manage.down\n    salt-run manage.down removekeys=True"},
		{Name: "manage.present", Fn: managePresent, Params: presenceParams,
			Doc: "Print a list of all minions that are up according to Salt's presence detection (no commands are sent).\n\n    salt-run manage.present"},
		{Name: "manage.list_state", Fn: managePresent, Params: presenceParams,
			Doc: "Print a list of all minions that are up according to Salt's presence detection.\n\n    salt-run manage.list_state"},
		{Name: "manage.not_present", Fn: manageNotPresent, Params: presenceParams,
			Doc: "Print a list of all minions that are NOT up according to Salt's presence detection.\n\n    salt-run manage.not_present"},
		{Name: "manage.list_not_state", Fn: manageNotPresent, Params: presenceParams,
			Doc: "Print a list of all minions that are NOT up according to Salt's presence detection.\n\n    salt-run manage.list_not_state"},
	}
	// Salt's joined/allowed/alived/reaped and their not_ forms are all
	// presence detection under other names.
	out := runners
	for _, n := range []string{"joined", "allowed", "alived", "reaped"} {
		out = append(out,
			Runner{Name: "manage." + n, Fn: managePresent, Params: presenceParams,
				Doc: "Print a list of all minions that are up according to Salt's presence detection (no commands are sent).\n\n    salt-run manage." + n},
			Runner{Name: "manage.not_" + n, Fn: manageNotPresent, Params: presenceParams,
				Doc: "Print a list of all minions that are NOT up according to Salt's presence detection (no commands are sent).\n\n    salt-run manage.not_" + n})
	}
	return out
}

var presenceParams = []Param{{Name: "subset"}, {Name: "show_ip", Default: false}}

// ping publishes test.ping and splits the expected minions into those that
// returned and those that did not (manage._ping).
func ping(ctx context.Context, c *Call) (up, down []string, err error) {
	job := Job{Tgt: c.Args["tgt"], TgtType: c.Str("tgt_type"), Fun: "test.ping", Arg: []any{}}
	job.Timeout, _ = c.Seconds("timeout")
	job.GatherJobTimeout, _ = c.Seconds("gather_job_timeout")
	res, err := c.Env.RunJob(ctx, job)
	if errors.Is(err, ErrNoMinions) {
		return []string{}, []string{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	returned := map[string]bool{}
	for id := range res.Returns {
		returned[id] = true
		up = append(up, id)
	}
	for _, id := range res.Minions {
		if !returned[id] {
			down = append(down, id)
		}
	}
	sort.Strings(up)
	sort.Strings(down)
	if up == nil {
		up = []string{}
	}
	if down == nil {
		down = []string{}
	}
	return up, down, nil
}

func manageStatus(ctx context.Context, c *Call) (any, error) {
	up, down, err := ping(ctx, c)
	if err != nil {
		return nil, err
	}
	return payload.NewMap("up", strAny(up), "down", strAny(down)), nil
}

func manageUp(ctx context.Context, c *Call) (any, error) {
	up, _, err := ping(ctx, c)
	if err != nil {
		return nil, err
	}
	return strAny(up), nil
}

func manageDown(ctx context.Context, c *Call) (any, error) {
	_, down, err := ping(ctx, c)
	if err != nil {
		return nil, err
	}
	if c.Bool("removekeys") {
		for _, id := range down {
			if err := c.Env.DeleteKey(id); err != nil {
				c.Log.Error("manage.down: cannot delete a key", "id", id, "err", err)
			}
		}
	}
	return strAny(down), nil
}

// connected returns the connected ids (optionally only those in subset).
func connected(c *Call) (map[string]string, error) {
	conn, err := c.Env.Connected()
	if err != nil {
		return nil, err
	}
	if subset := c.StrList("subset"); subset != nil {
		keep := map[string]bool{}
		for _, s := range subset {
			keep[s] = true
		}
		for id := range conn {
			if !keep[id] {
				delete(conn, id)
			}
		}
	}
	return conn, nil
}

func managePresent(_ context.Context, c *Call) (any, error) {
	conn, err := connected(c)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(conn))
	for id := range conn {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if c.Bool("show_ip") {
		out := payload.NewMap()
		for _, id := range ids {
			out.Set(id, conn[id])
		}
		return out, nil
	}
	return strAny(ids), nil
}

func manageNotPresent(_ context.Context, c *Call) (any, error) {
	conn, err := c.Env.Connected()
	if err != nil {
		return nil, err
	}
	acc, err := c.Env.Accepted()
	if err != nil {
		return nil, err
	}
	subset := c.StrList("subset")
	keep := map[string]bool{}
	for _, s := range subset {
		keep[s] = true
	}
	out := []string{}
	for _, id := range acc {
		if _, ok := conn[id]; ok {
			continue
		}
		if subset != nil && !keep[id] {
			continue
		}
		out = append(out, id)
	}
	return strAny(out), nil
}
