package master

import (
	"context"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

var _ runners.MineEnv = (*runnerEnv)(nil)

// MineGet implements runners.MineEnv: Salt's mine runner asks
// RemoteFuncs._mine_get with the master's own id as the requester.
func (e *runnerEnv) MineGet(_ context.Context, tgt, fun any, tgtType string) (*payload.Map, error) {
	load := payload.NewMap("id", e.m.cfg.ID, "tgt", tgt, "fun", fun, "tgt_type", tgtType)
	return e.m.mineGet(e.m.cfg.ID, load), nil
}
