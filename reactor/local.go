package reactor

import (
	"context"
	"errors"

	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/wire/payload"
)

// LocalClient publishes the jobs of local reactions; *master.Master
// satisfies it. Publishing fires salt/job/<jid>/new (and the returns fire
// salt/job/<jid>/ret/<id>) as in Salt.
type LocalClient interface {
	Publish(ctx context.Context, req master.PublishRequest) (jid string, minions, missing []string, err error)
}

// runLocal publishes a local reaction's job without waiting for returns
// (Salt's LocalClient.cmd_async).
func (r *Reactor) runLocal(rx *Reaction, chain []string) {
	if r.o.Local == nil {
		r.st.failed.Add(1)
		r.log.Error("local reaction not run: no local client", "reaction", rx.ID, "fun", rx.Fun)
		return
	}
	req := rx.Publish
	req.Kwargs = rx.Publish.Kwargs.Clone()
	if req.Kwargs == nil {
		req.Kwargs = payload.NewMap()
	}
	req.JID = r.jid(req.JID, chain)
	// cmd_async: nothing waits for the job cache's commit of the load.
	req.Queued = true
	jid, minions, _, err := r.o.Local.Publish(r.ctx, req)
	switch {
	case errors.Is(err, master.ErrNoMinions):
		r.st.noMinions.Add(1)
		r.log.Info("local reaction matched no minions", "reaction", rx.ID, "fun", rx.Fun, "tgt", payload.Text(req.Tgt))
	case err != nil:
		r.st.failed.Add(1)
		r.log.Error("Reactor failed to execute local", "reaction", rx.ID, "fun", rx.Fun, "err", err)
	default:
		r.st.local.Add(1)
		r.log.Debug("local reaction published", "reaction", rx.ID, "fun", rx.Fun, "jid", jid, "minions", len(minions))
	}
}
