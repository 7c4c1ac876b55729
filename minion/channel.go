package minion

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// Request defaults (Salt's AsyncReqChannel.send and _return_pub).
const (
	defaultRequestTimeout = 60 * time.Second
	defaultRequestTries   = 3
	// maxReauthPerRequest bounds the re-authentications one request may
	// cause ("bad load" answers: the master's session key changed).
	maxReauthPerRequest = 5
)

func joinHostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// request sends load as an AES request and returns the decoded reply. It
// goes to the master of ctx's job (or the primary master); in hot
// multi-master the events, mine data and schedule returns the minion sends
// on its own go to every connected master, and the first reply is
// returned. When a master cannot decrypt it ("bad load": its session key
// changed) the minion re-authenticates and sends the request again (up to
// maxReauthPerRequest times). A "tok" key in load is set to the minion's
// token.
func (m *Minion) request(ctx context.Context, load *payload.Map, tries int, timeout time.Duration) (any, error) {
	if tries <= 0 {
		tries = defaultRequestTries
	}
	if timeout <= 0 {
		timeout = defaultRequestTimeout
	}
	if load.Has("tok") {
		load = load.Clone()
		load.Set("tok", m.tok)
	}
	targets := m.requestTargets(ctx, load.Str("cmd"))
	switch len(targets) {
	case 0:
		return nil, ErrNotConnected
	case 1:
		return m.requestLink(ctx, targets[0], load, tries, timeout)
	}
	type answer struct {
		ret any
		err error
	}
	answers := make(chan answer, len(targets))
	for _, l := range targets {
		go func() {
			ret, err := m.requestLink(ctx, l, load, tries, timeout)
			if err != nil {
				err = fmt.Errorf("master %s: %w", l.master, err)
			}
			answers <- answer{ret, err}
		}()
	}
	var (
		first any
		ok    bool
		errs  []error
	)
	for range targets {
		a := <-answers
		switch {
		case a.err != nil:
			errs = append(errs, a.err)
		case !ok:
			first, ok = a.ret, true
		}
	}
	if ok {
		if len(errs) > 0 {
			m.log.Info("a request reached only some of the masters", "cmd", load.Str("cmd"), "err", errors.Join(errs...))
		}
		return first, nil
	}
	return nil, errors.Join(errs...)
}

// requestLink sends load to the master of l.
func (m *Minion) requestLink(ctx context.Context, l *link, load *payload.Map, tries int, timeout time.Duration) (any, error) {
	for attempt := 0; ; attempt++ {
		s := m.linkSession(l)
		if s == nil {
			return nil, ErrNotConnected
		}
		// load is left as it is (tries, re-auths and other masters send
		// it again): the frame is that of a copy with the nonce set.
		frame, nonce, err := message.EncodeAESRequestFresh(s.crypticle, load)
		if err != nil {
			return nil, err
		}
		_, addr := l.target()
		reply, err := m.reqPool(addr).Send(ctx, frame, tries, timeout)
		if err != nil {
			return nil, fmt.Errorf("minion: %s request: %w", load.Str("cmd"), err)
		}
		ret, err := message.OpenSendReplyInPlace(s.crypticle, reply, nonce, wireLimits)
		if errors.Is(err, message.ErrDecrypt) && attempt < maxReauthPerRequest {
			// A master restarted (again) between our re-auth and this
			// request answers "bad load" once more: re-auth and send again,
			// a bounded number of times.
			m.log.Info("the master could not decrypt a request; re-authenticating", "cmd", load.Str("cmd"), "attempt", attempt+1)
			if _, err := m.reauth(ctx, l, s); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("minion: %s reply: %w", load.Str("cmd"), err)
		}
		return ret, nil
	}
}

// fetchPillar sends _pillar and checks the send_private reply (§8.1). It
// does not change the in-memory pillar.
func (m *Minion) fetchPillar(ctx context.Context, pillarenv any, override *payload.Map) (*payload.Map, error) {
	return m.fetchPillarExt(ctx, pillarenv, override, nil)
}

// fetchPillarExt is fetchPillar with an on-demand ext_pillar (the load's
// "ext", as Salt's RemotePillar sends for pillar.ext); nil sends none.
func (m *Minion) fetchPillarExt(ctx context.Context, pillarenv any, override *payload.Map, ext any) (*payload.Map, error) {
	if override == nil {
		override = &payload.Map{}
	}
	saltenv, _ := m.opts.Get("saltenv")
	if pillarenv == nil {
		pillarenv, _ = m.opts.Get("pillarenv")
	}
	load := payload.NewMap("id", m.id, "grains", m.Grains(), "saltenv", saltenv, "pillarenv", pillarenv,
		"pillar_override", override, "extra_minion_data", &payload.Map{}, "ver", "2", "cmd", "_pillar")
	if ext != nil {
		load.Set("ext", ext)
	}
	lk := m.linkFor(ctx)
	for attempt := 0; ; attempt++ {
		s := m.linkSession(lk)
		if s == nil {
			return nil, ErrNotConnected
		}
		l := load.Clone()
		frame, nonce, err := message.EncodeAESRequest(s.crypticle, l)
		if err != nil {
			return nil, err
		}
		_, addr := lk.target()
		reply, err := m.reqPool(addr).Send(ctx, frame, defaultRequestTries, defaultRequestTimeout)
		if err != nil {
			return nil, fmt.Errorf("minion: _pillar request: %w", err)
		}
		p, err := message.OpenPrivateReply(m.priv, s.masterPub, reply, nonce, wireLimits)
		if errors.Is(err, message.ErrDecrypt) && attempt == 0 {
			if _, err := m.reauth(ctx, lk, s); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("minion: _pillar reply: %w", err)
		}
		switch v := p.(type) {
		case *payload.Map:
			return v, nil
		case nil:
			return &payload.Map{}, nil
		}
		return nil, fmt.Errorf("minion: _pillar reply: pillar is %s, not a map", payload.TypeName(p))
	}
}

// refreshPillar fetches the pillar and makes it the in-memory one.
func (m *Minion) refreshPillar(ctx context.Context) error {
	p, err := m.fetchPillar(ctx, nil, nil)
	if err != nil {
		return err
	}
	freeze(p)
	m.mu.Lock()
	m.pillar = p
	m.mu.Unlock()
	if m.schedule != nil {
		m.schedule.Wake() // the pillar may schedule jobs
	}
	return nil
}

// fireMaster sends one event to the master bus the way Minion._fire_master
// does: {id, cmd, pretag, tok, data, tag}, plus the start_event_grains.
func (m *Minion) fireMaster(ctx context.Context, data any, tag string, withGrains bool) error {
	if data == nil || !payload.Truthy(data) {
		data = &payload.Map{}
	}
	load := payload.NewMap("id", m.id, "cmd", "_minion_event", "pretag", nil, "tok", nil, "data", data, "tag", tag)
	if withGrains {
		names := m.cfg.Opts.StrList("start_event_grains")
		if len(names) > 0 {
			g := m.Grains()
			sub := &payload.Map{}
			for _, it := range g.Items() {
				for _, n := range names {
					if payload.KeyString(it.Key) == n {
						sub.SetKey(it.Key, it.Value)
					}
				}
			}
			load.Set("grains", sub)
		}
	}
	_, err := m.request(ctx, load, defaultRequestTries, defaultRequestTimeout)
	return err
}

// FireMaster sends one event with data under tag to the master's event
// bus (Salt's _fire_master). It fails with ErrNotConnected before the
// first authentication.
func (m *Minion) FireMaster(ctx context.Context, data any, tag string) error {
	return m.fireMaster(ctx, data, tag, false)
}

// fireStartEvents sends minion_start (unless enable_legacy_startup_events
// is off) and salt/minion/<id>/start.
func (m *Minion) fireStartEvents(ctx context.Context) {
	msg := fmt.Sprintf("Minion %s started at %s", m.id, time.Now().Format(time.ANSIC))
	legacy := true
	if v, ok := m.cfg.Opts.Get("enable_legacy_startup_events"); ok {
		legacy = payload.Truthy(v)
	}
	if legacy {
		if err := m.fireMaster(ctx, msg, "minion_start", true); err != nil {
			m.log.Info("fire_master failed", "tag", "minion_start", "err", err)
		}
	}
	if err := m.fireMaster(ctx, msg, "salt/minion/"+m.id+"/start", true); err != nil {
		m.log.Info("fire_master failed", "tag", "salt/minion/"+m.id+"/start", "err", err)
	}
}
