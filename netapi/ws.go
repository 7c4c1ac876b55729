package netapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/gsalt/gsalt/wire/payload"
)

// wsReady is the message a client sends before events flow, as
// rest_cherrypy's websocket handler waits for it.
const wsReady = "websocket client ready"

// websocket is /ws and /ws/<token>: the master event bus over a
// WebSocket. The token comes from the path (browsers cannot set headers
// on a WebSocket) or the session. After the client sends "websocket
// client ready", every event is a text frame "data: <json>\n\n" with the
// event's tag and data, or, with ?format_events, the summaries of Salt's
// event_processor (jobs, minions with grains).
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimRight(s.opts.RootPrefix, "/") + "/ws"
	if tok := strings.Trim(strings.TrimPrefix(r.URL.Path, p), "/"); tok != "" {
		r.Header.Set("X-Auth-Token", tok)
	}
	td, err := s.authenticate(r)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = &httpError{code: http.StatusInternalServerError}
		}
		writeErrorPage(w, he)
		return
	}
	_, formatEvents := r.URL.Query()["format_events"]
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.opts.CORSOrigin})
	if err != nil {
		s.log.Debug("websocket upgrade failed", "err", err)
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 10)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	var mu sync.Mutex
	send := func(msg string) error {
		mu.Lock()
		defer mu.Unlock()
		return conn.Write(ctx, websocket.MessageText, []byte(msg))
	}
	ready := make(chan struct{})
	go func() {
		defer cancel()
		once := sync.Once{}
		for {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			if string(msg) == wsReady {
				once.Do(func() { close(ready) })
			}
			if send("server received message") != nil {
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-ctx.Done():
		return
	}
	ev, err := s.client.Subscribe(ctx, nil, 4096)
	if err != nil {
		_ = conn.Close(websocket.StatusInternalError, "Salt Master is not available.")
		return
	}
	defer ev.Close()
	info := newSaltInfo(send)
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-ev.C():
			if !ok {
				_ = conn.Close(websocket.StatusGoingAway, "event bus closed")
				return
			}
			data := jsonable(e.Data)
			if formatEvents {
				if err := info.process(e.Tag, data, func(tgt string) {
					s.presenceGrains(ctx, td.Str("token"), tgt)
				}); err != nil {
					return
				}
				continue
			}
			b, err := json.Marshal(map[string]any{"tag": e.Tag, "data": data})
			if err != nil {
				continue
			}
			if send("data: "+string(b)+"\n\n") != nil {
				return
			}
		}
	}
}

// presenceGrains starts the grains.items job Salt's event processor runs
// for newly present minions (as the session's user, through the
// master's ACLs).
func (s *Server) presenceGrains(ctx context.Context, token, tgt string) {
	chunk := payload.NewMap("client", "local_async", "tgt", tgt, "tgt_type", "list", "fun", "grains.items", "token", token)
	if _, err := s.runChunk(ctx, chunk); err != nil {
		s.log.Warn("websocket: grains.items for new minions failed", "tgt", tgt, "err", err)
	}
}
