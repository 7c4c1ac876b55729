package netapi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/payload"
)

// Clients lists the lowstate clients (NetapiClient's methods).
var clients = map[string]bool{
	"local": true, "local_async": true, "local_batch": true, "local_subset": true,
	"runner": true, "runner_async": true, "wheel": true, "wheel_async": true, "ssh": true,
}

// runChunk is NetapiClient.run for one chunk.
func (s *Server) runChunk(ctx context.Context, chunk *payload.Map) (any, error) {
	client := chunk.Str("client")
	if !clients[client] || client == "ssh" {
		return nil, herr(http.StatusBadRequest, fmt.Sprintf("Invalid client specified: '%s'", client))
	}
	enabled := false
	for _, c := range s.opts.EnableClients {
		if c == client {
			enabled = true
		}
	}
	if !enabled {
		return nil, herr(http.StatusBadRequest, fmt.Sprintf("Client disabled: '%s'. Add to 'netapi_enable_clients' master config option to enable.", client))
	}
	if !chunk.Has("token") && !chunk.Has("eauth") {
		return nil, herr(http.StatusUnauthorized, "No authentication credentials given")
	}
	switch client {
	case "local", "local_async", "local_batch", "local_subset":
		return s.local(ctx, chunk, client)
	case "runner", "runner_async":
		return s.runner(ctx, chunk, client == "runner_async")
	default:
		return s.wheel(ctx, chunk, client == "wheel_async")
	}
}

// raiseError maps a master {"error": {...}} reply to Salt's exceptions as
// hypermedia_handler turns them into HTTP codes.
func raiseError(e any) error {
	em, _ := e.(*payload.Map)
	name, msg := "", payload.Text(e)
	if em != nil {
		name, msg = em.Str("name"), em.Str("message")
	}
	switch name {
	case "AuthenticationError", "AuthorizationError", "EauthAuthenticationError", "TokenAuthenticationError", "UserAuthenticationError":
		return herr(http.StatusUnauthorized, msg)
	case "SaltInvocationError":
		return herr(http.StatusBadRequest, msg)
	}
	return fmt.Errorf("%s: %s", name, msg)
}

func clientErr(err error) error {
	var se *saltcli.SaltError
	if errors.As(err, &se) {
		switch {
		case errors.Is(se, saltcli.ErrAuthentication), errors.Is(se, saltcli.ErrAuthorization):
			return herr(http.StatusUnauthorized, se.Text)
		case errors.Is(se, saltcli.ErrNoMaster), errors.Is(se, saltcli.ErrMasterTimeout):
			return herr(http.StatusServiceUnavailable, se.Text)
		}
	}
	return err
}

func chunkInt(chunk *payload.Map, k string, def int) int {
	if v, ok := chunk.Get(k); ok {
		if n, ok := payload.AsInt(v); ok {
			return int(n)
		}
	}
	return def
}

// local runs LocalClient.cmd / run_job: the chunk's creds and other client
// options travel as the publish kwargs, kwarg joins arg as Salt's
// {"__kwarg__": True} dict.
func (s *Server) local(ctx context.Context, chunk *payload.Map, client string) (any, error) {
	tgt, _ := chunk.Get("tgt")
	fun, _ := chunk.Get("fun")
	if tgt == nil || fun == nil {
		return nil, herr(http.StatusBadRequest, "Missing tgt or fun")
	}
	arg := chunk.List("arg")
	if kw := chunk.Map("kwarg"); kw != nil && kw.Len() > 0 {
		k := kw.Clone()
		k.Set("__kwarg__", true)
		arg = append(append([]any{}, arg...), k)
	}
	kwargs := payload.NewMap()
	for _, it := range chunk.Items() {
		switch k := payload.KeyString(it.Key); k {
		case "client", "tgt", "fun", "arg", "kwarg", "tgt_type", "timeout", "ret", "jid", "full_return", "expr_form":
		default:
			kwargs.Set(k, it.Value)
		}
	}
	if client == "local_batch" && !kwargs.Has("batch") {
		kwargs.Set("batch", "50%")
	}
	tgtType := chunk.Str("tgt_type")
	if tgtType == "" {
		tgtType = "glob"
	}
	timeout := chunkInt(chunk, "timeout", s.cfg.Timeout)
	p := saltcli.PubArgs{Tgt: tgt, Fun: fun, Arg: arg, TgtType: tgtType, Ret: chunk.Str("ret"), Timeout: timeout, Kwargs: kwargs}
	if client == "local_subset" {
		var err error
		if p, err = s.subset(ctx, chunk, p); err != nil {
			return nil, err
		}
		if l, _ := p.Tgt.([]any); len(l) == 0 {
			return payload.NewMap(), nil
		}
	}
	return s.publish(ctx, chunk, client, p, timeout)
}

// subset is LocalClient.cmd_subset's choice of minions: sys.list_functions
// on the target (with the caller's credentials, so the ACL must allow it),
// the answering minions shuffled, the first "subset" (or legacy "sub",
// default 3) of them that have the function; p is returned aimed at them
// as a list (empty when none has it).
func (s *Server) subset(ctx context.Context, chunk *payload.Map, p saltcli.PubArgs) (saltcli.PubArgs, error) {
	n := 3
	kw := p.Kwargs.Clone()
	for _, k := range []string{"subset", "sub"} {
		if v, ok := kw.Get(k); ok {
			i, ok := payload.AsInt(v)
			if !ok {
				return p, herr(http.StatusBadRequest, fmt.Sprintf("%s must be an integer", k))
			}
			n = int(i)
			kw.Delete(k)
		}
	}
	list := p
	list.Fun, list.Arg, list.Kwargs = "sys.list_functions", nil, kw
	plain := chunk.Clone()
	plain.Delete("full_return")
	rets, err := s.publish(ctx, plain, "local", list, p.Timeout)
	if err != nil {
		return p, err
	}
	rm, _ := rets.(*payload.Map)
	var ids []string
	if rm != nil {
		for _, it := range rm.Items() {
			ids = append(ids, payload.KeyString(it.Key))
		}
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	fun := payload.Text(p.Fun)
	chosen := []any{}
	for _, id := range ids {
		if len(chosen) >= n {
			break
		}
		fl, _ := rm.Get(id)
		l, _ := fl.([]any)
		for _, f := range l {
			if payload.Text(f) == fun {
				chosen = append(chosen, id)
				break
			}
		}
	}
	p.Tgt, p.TgtType, p.Kwargs = chosen, "list", kw
	return p, nil
}

// publish runs one publication: local_async and local_batch answer with
// the jid and the expected minions, the others wait for the returns.
func (s *Server) publish(ctx context.Context, chunk *payload.Map, client string, p saltcli.PubArgs, timeout int) (any, error) {
	if client == "local_async" || client == "local_batch" {
		pd, err := s.client.Publish(ctx, p, discard{})
		if err != nil {
			return nil, clientErr(err)
		}
		if pd == nil {
			return payload.NewMap(), nil
		}
		return payload.NewMap("jid", pd.JID, "minions", strList(pd.Minions)), nil
	}
	ev, err := s.client.Subscribe(ctx, nil, 4096)
	if err != nil {
		return nil, clientErr(err)
	}
	defer ev.Close()
	pd, err := s.client.Publish(ctx, p, discard{})
	if err != nil {
		return nil, clientErr(err)
	}
	out := payload.NewMap()
	if pd == nil {
		return out, nil
	}
	full := payload.Truthy(mustGet(chunk, "full_return"))
	err = s.client.Watch(ctx, ev, pd, saltcli.WatchOptions{
		Timeout:          time.Duration(timeout) * time.Second,
		GatherJobTimeout: time.Duration(s.cfg.GatherJobTimeout) * time.Second,
		FindJobKwargs:    payload.NewMap("token", mustGet(chunk, "token")),
		Notice:           discard{},
	}, func(r saltcli.MinionReturn) error {
		if r.Failed || r.Data == nil {
			return nil
		}
		if full {
			out.Set(r.ID, r.Data)
		} else {
			out.Set(r.ID, mustGet(r.Data, "ret"))
		}
		return nil
	})
	if err != nil {
		return nil, clientErr(err)
	}
	return out, nil
}

// runnerLow is RunnerClient._reformat_low: credentials stay at the top,
// everything else goes into kwarg (arg and kwarg as given).
func runnerLow(chunk *payload.Map, cmd string) *payload.Map {
	load := payload.NewMap("cmd", cmd, "fun", chunk.Str("fun"))
	low := payload.NewMap()
	for _, it := range chunk.Items() {
		k := payload.KeyString(it.Key)
		switch k {
		case "client", "fun", "full_return", "timeout":
			continue
		case "token", "eauth", "username", "password":
			load.Set(k, it.Value)
			continue
		}
		low.Set(k, it.Value)
	}
	if cmd == "runner" {
		if !low.Has("arg") {
			low.Set("arg", []any{})
		}
		if !low.Has("kwarg") {
			kw := payload.NewMap()
			for _, it := range low.Items() {
				if k := payload.KeyString(it.Key); k != "arg" {
					kw.Set(k, it.Value)
				}
			}
			low = payload.NewMap("arg", low.List("arg"), "kwarg", kw)
		}
		load.Set("kwarg", low)
		return load
	}
	// wheel: the low keys travel at the top of the load.
	for _, it := range low.Items() {
		load.SetKey(it.Key, it.Value)
	}
	return load
}

func (s *Server) runner(ctx context.Context, chunk *payload.Map, async bool) (any, error) {
	if chunk.Str("fun") == "" {
		return nil, herr(http.StatusBadRequest, "Missing fun")
	}
	var ev *saltcli.Events
	if !async {
		var err error
		if ev, err = s.client.Subscribe(ctx, nil, 4096); err != nil {
			return nil, clientErr(err)
		}
		defer ev.Close()
	}
	rep, err := s.client.Request(ctx, runnerLow(chunk, "runner"), 30*time.Second)
	if err != nil {
		return nil, clientErr(err)
	}
	m, _ := rep.(*payload.Map)
	if m == nil {
		return nil, fmt.Errorf("netapi: unexpected runner reply %v", rep)
	}
	if e, ok := m.Get("error"); ok {
		return nil, raiseError(e)
	}
	if async {
		return m, nil
	}
	tag := m.Str("tag") + "/ret"
	timeout := time.Duration(chunkInt(chunk, "timeout", 300)) * time.Second
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		select {
		case e, ok := <-ev.C():
			if !ok {
				return nil, herr(http.StatusServiceUnavailable, "Salt Master is not available.")
			}
			if e.Tag != tag {
				continue
			}
			if payload.Truthy(mustGet(chunk, "full_return")) {
				return e.Data, nil
			}
			return mustGet(e.Data, "return"), nil
		case <-tctx.Done():
			return nil, herr(http.StatusGatewayTimeout, "")
		}
	}
}

func (s *Server) wheel(ctx context.Context, chunk *payload.Map, async bool) (any, error) {
	if chunk.Str("fun") == "" {
		return nil, herr(http.StatusBadRequest, "Missing fun")
	}
	load := runnerLow(chunk, "wheel")
	rep, err := s.client.Request(ctx, load, 60*time.Second)
	if err != nil {
		return nil, clientErr(err)
	}
	m, _ := rep.(*payload.Map)
	if m == nil {
		return nil, fmt.Errorf("netapi: unexpected wheel reply %v", rep)
	}
	if e, ok := m.Get("error"); ok {
		return nil, raiseError(e)
	}
	if async {
		return payload.NewMap("tag", m.Str("tag"), "jid", mustGet(m.Map("data"), "jid")), nil
	}
	return m, nil
}

// fireEvent puts an event on the master bus (sock_dir/master_event_pull).
func (s *Server) fireEvent(ctx context.Context, tag string, data *payload.Map) error {
	return event.FirePull(ctx, sockPath(s.cfg.SockDir, event.MasterPullSocket), event.Event{Tag: tag, Data: data})
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func mustGet(m *payload.Map, k string) any {
	if m == nil {
		return nil
	}
	v, _ := m.Get(k)
	return v
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
