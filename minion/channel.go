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
	"github.com/gsalt/gsalt/wire/transport"
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

// request sends load as an AES request and returns the decoded reply. When
// the master cannot decrypt it ("bad load": its session key changed) the
// minion re-authenticates and sends the request again (up to
// maxReauthPerRequest times). A "tok" key in
// load is set to the minion's token.
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
	for attempt := 0; ; attempt++ {
		s := m.current()
		if s == nil {
			return nil, ErrNotConnected
		}
		l := load.Clone()
		frame, nonce, err := message.EncodeAESRequest(s.crypticle, l)
		if err != nil {
			return nil, err
		}
		reply, err := m.reqPool(m.masterAddr).Send(ctx, frame, tries, timeout)
		if err != nil {
			return nil, fmt.Errorf("minion: %s request: %w", load.Str("cmd"), err)
		}
		ret, err := message.OpenSendReply(s.crypticle, reply, nonce, wireLimits)
		if errors.Is(err, message.ErrDecrypt) && attempt < maxReauthPerRequest {
			// A master restarted (again) between our re-auth and this
			// request answers "bad load" once more: re-auth and send again,
			// a bounded number of times.
			m.log.Info("the master could not decrypt a request; re-authenticating", "cmd", load.Str("cmd"), "attempt", attempt+1)
			if _, err := m.reauth(ctx, s); err != nil {
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
	if override == nil {
		override = &payload.Map{}
	}
	saltenv, _ := m.opts.Get("saltenv")
	if pillarenv == nil {
		pillarenv, _ = m.opts.Get("pillarenv")
	}
	load := payload.NewMap("id", m.id, "grains", m.Grains(), "saltenv", saltenv, "pillarenv", pillarenv,
		"pillar_override", override, "extra_minion_data", &payload.Map{}, "ver", "2", "cmd", "_pillar")
	for attempt := 0; ; attempt++ {
		s := m.current()
		if s == nil {
			return nil, ErrNotConnected
		}
		l := load.Clone()
		frame, nonce, err := message.EncodeAESRequest(s.crypticle, l)
		if err != nil {
			return nil, err
		}
		client := transport.ReqClient{Addr: m.masterAddr, Tries: defaultRequestTries, Timeout: defaultRequestTimeout, Logger: m.log}
		reply, err := client.Send(ctx, frame)
		if err != nil {
			return nil, fmt.Errorf("minion: _pillar request: %w", err)
		}
		p, err := message.OpenPrivateReply(m.priv, s.masterPub, reply, nonce, wireLimits)
		if errors.Is(err, message.ErrDecrypt) && attempt == 0 {
			if _, err := m.reauth(ctx, s); err != nil {
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
