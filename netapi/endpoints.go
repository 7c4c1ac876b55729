package netapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

func sockPath(dir, name string) string { return filepath.Join(dir, name) }

// root is "/": GET describes the API, POST runs lowstate chunks.
func (s *Server) root(r *http.Request) (any, error) {
	p := strings.TrimRight(s.opts.RootPrefix, "/")
	if r.URL.Path != p+"/" && r.URL.Path != p {
		return nil, herr(http.StatusNotFound, fmt.Sprintf("The path '%s' was not found.", r.URL.Path))
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return payload.NewMap("return", "Welcome", "clients", sortedClients()), nil
	case http.MethodPost:
		td, err := s.authenticate(r)
		if err != nil {
			return nil, err
		}
		return s.execLowstate(r, td.Str("token"), "")
	}
	return nil, herr(http.StatusMethodNotAllowed, "")
}

func sortedClients() []any {
	var l []string
	for c := range clients {
		l = append(l, c)
	}
	sort.Strings(l)
	return strList(l)
}

// execLowstate decodes the body's chunks, adds the session token (and
// client) and runs each one: {"return": [ret, ...]}.
func (s *Server) execLowstate(r *http.Request, token, client string) (any, error) {
	body, err := decodeBody(r)
	if err != nil {
		return nil, err
	}
	chunks, err := lowstate(body)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, c := range chunks {
		if token != "" {
			c.Set("token", token)
		}
		if client != "" {
			c.Set("client", client)
		}
		ret, err := s.runChunk(r.Context(), c)
		if err != nil {
			return nil, err
		}
		out = append(out, ret)
	}
	return payload.NewMap("return", out), nil
}

// login is /login: POST eauth credentials; the answer carries the token
// (also as X-Auth-Token and the session_id cookie) and the user's perms.
func (s *Server) login(r *http.Request) (any, error) {
	if r.Method == http.MethodGet {
		return payload.NewMap("status", "401 Unauthorized", "return", "Please log in"), nil
	}
	if r.Method != http.MethodPost {
		return nil, herr(http.StatusMethodNotAllowed, "")
	}
	body, err := decodeBody(r)
	if err != nil {
		return nil, err
	}
	chunks, err := lowstate(body)
	if err != nil || len(chunks) == 0 {
		return nil, herr(http.StatusUnauthorized, "")
	}
	creds := chunks[0]
	load := payload.NewMap("cmd", "mk_token")
	for _, k := range []string{"eauth", "username", "password", "token_expire"} {
		if v, ok := creds.Get(k); ok {
			load.Set(k, v)
		}
	}
	rep, err := s.client.Request(r.Context(), load, 30*time.Second)
	if err != nil {
		return nil, herr(http.StatusServiceUnavailable, "Salt Master is not available.")
	}
	td, _ := rep.(*payload.Map)
	if td == nil || td.Str("token") == "" {
		s.log.Warn("login refused", "user", creds.Str("username"), "eauth", creds.Str("eauth"))
		return nil, herr(http.StatusUnauthorized, "Could not authenticate using provided credentials")
	}
	return s.loginReply(td), nil
}

// loginReply builds /login's answer; the token travels in a response
// header the wrapper cannot set, so it is carried in a loginAnswer.
func (s *Server) loginReply(td *payload.Map) any {
	ea, _ := s.cfg.Opts.Get("external_auth")
	var provider any
	if m, ok := ea.(map[string]any); ok {
		provider = m[td.Str("eauth")]
	}
	perms := sumPermissions(td, provider)
	var permsV any = perms
	if len(perms) == 0 {
		permsV = payload.NewMap()
	}
	return &loginAnswer{token: td.Str("token"), body: payload.NewMap("return", []any{payload.NewMap(
		"token", td.Str("token"), "expire", mustGet(td, "expire"), "start", mustGet(td, "start"),
		"user", td.Str("name"), "eauth", td.Str("eauth"), "perms", permsV)})}
}

// loginAnswer is the /login body plus the token for the headers.
type loginAnswer struct {
	token string
	body  *payload.Map
}

// MarshalJSON renders the body.
func (l *loginAnswer) MarshalJSON() ([]byte, error) { return json.Marshal(l.body) }

// sumPermissions is salt.netapi.sum_permissions + sorted_permissions.
func sumPermissions(td *payload.Map, provider any) []any {
	pm, _ := provider.(map[string]any)
	var perms []any
	add := func(v any) {
		if l, ok := v.([]any); ok {
			perms = append(perms, l...)
		}
	}
	add(pm[td.Str("name")])
	add(pm["*"])
	for _, g := range td.List("groups") {
		add(pm[payload.Text(g)+"%"])
	}
	var strs []string
	var others []any
	seen := map[string]bool{}
	for _, p := range perms {
		if s, ok := p.(string); ok {
			if !seen[s] {
				seen[s] = true
				strs = append(strs, s)
			}
			continue
		}
		others = append(others, p)
	}
	sort.Strings(strs)
	out := strList(strs)
	return append(out, others...)
}

// logout is /logout: the session cookie is cleared.
func (s *Server) logout(r *http.Request) (any, error) {
	if _, err := s.authenticate(r); err != nil {
		return nil, err
	}
	s.tokens.drop(s.sessionToken(r))
	return &logoutAnswer{body: payload.NewMap("return", "Your token has been cleared")}, nil
}

// logoutAnswer makes the wrapper expire the session cookie.
type logoutAnswer struct{ body *payload.Map }

// tokenEP is /token: POST credentials, answer [{token, ...}] without a
// session.
func (s *Server) tokenEP(r *http.Request) (any, error) {
	if r.Method != http.MethodPost {
		return nil, herr(http.StatusMethodNotAllowed, "")
	}
	body, err := decodeBody(r)
	if err != nil {
		return nil, err
	}
	chunks, err := lowstate(body)
	if err != nil || len(chunks) == 0 {
		return nil, herr(http.StatusUnauthorized, "")
	}
	load := chunks[0].Clone()
	load.Set("cmd", "mk_token")
	rep, err := s.client.Request(r.Context(), load, 30*time.Second)
	if err != nil {
		return nil, herr(http.StatusServiceUnavailable, "Salt Master is not available.")
	}
	td, _ := rep.(*payload.Map)
	if td == nil || td.Str("token") == "" {
		return nil, herr(http.StatusUnauthorized, "Could not authenticate using provided credentials")
	}
	return []any{td}, nil
}

// minions is /minions[/<id>]: GET runs grains.items (local), POST starts
// a job (local_async) and answers {"return": [{jid, minions}], "_links"}.
func (s *Server) minions(r *http.Request) (any, error) {
	td, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	p := strings.TrimRight(s.opts.RootPrefix, "/") + "/minions"
	mid := strings.Trim(strings.TrimPrefix(r.URL.Path, p), "/")
	switch r.Method {
	case http.MethodGet:
		tgt := "*"
		if mid != "" {
			tgt = mid
		}
		c := payload.NewMap("client", "local", "tgt", tgt, "fun", "grains.items", "token", td.Str("token"))
		ret, err := s.runChunk(r.Context(), c)
		if err != nil {
			return nil, err
		}
		return payload.NewMap("return", []any{ret}), nil
	case http.MethodPost:
		ret, err := s.execLowstate(r, td.Str("token"), "local_async")
		if err != nil {
			return nil, err
		}
		m := ret.(*payload.Map)
		var links []any
		for _, j := range m.List("return") {
			if jm, ok := j.(*payload.Map); ok {
				links = append(links, payload.NewMap("href", "/jobs/"+jm.Str("jid")))
			}
		}
		m.Set("_links", payload.NewMap("jobs", links))
		return &statusAnswer{code: http.StatusAccepted, body: m}, nil
	}
	return nil, herr(http.StatusMethodNotAllowed, "")
}

// jobs is /jobs[/<jid>]: jobs.list_jobs, or jobs.list_job for one jid
// answered as {"info": [job], "return": [returns]}.
func (s *Server) jobs(r *http.Request) (any, error) {
	td, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if r.Method != http.MethodGet {
		return nil, herr(http.StatusMethodNotAllowed, "")
	}
	p := strings.TrimRight(s.opts.RootPrefix, "/") + "/jobs"
	jid := strings.Trim(strings.TrimPrefix(r.URL.Path, p), "/")
	c := payload.NewMap("client", "runner", "fun", "jobs.list_jobs", "token", td.Str("token"))
	if jid != "" {
		c = payload.NewMap("client", "runner", "fun", "jobs.list_job", "jid", jid, "token", td.Str("token"))
	}
	// The jobs endpoint is allowed whenever runner is.
	ret, err := s.runChunkAs(r, c, "runner")
	if err != nil {
		return nil, err
	}
	if jid == "" {
		return payload.NewMap("return", []any{ret}), nil
	}
	// As rest_cherrypy: info is the whole job (Result included), return
	// each minion's bare return.
	job, _ := ret.(*payload.Map)
	rets := payload.NewMap()
	if job != nil {
		if res := job.Map("Result"); res != nil {
			for _, it := range res.Items() {
				m, _ := it.Value.(*payload.Map)
				rets.SetKey(it.Key, mustGet(m, "return"))
			}
		}
	}
	return payload.NewMap("info", []any{job}, "return", []any{rets}), nil
}

func (s *Server) runChunkAs(r *http.Request, c *payload.Map, client string) (any, error) {
	c.Set("client", client)
	return s.runChunk(r.Context(), c)
}

// run is /run: lowstate with credentials in every chunk, no session.
func (s *Server) run(r *http.Request) (any, error) {
	if r.Method != http.MethodPost {
		return nil, herr(http.StatusMethodNotAllowed, "")
	}
	return s.execLowstate(r, "", "")
}

// hook is /hook/<path>: the request body and headers are fired as
// salt/netapi/hook/<path>.
func (s *Server) hook(r *http.Request) (any, error) {
	if r.Method != http.MethodPost {
		return nil, herr(http.StatusMethodNotAllowed, "")
	}
	if !s.opts.WebhookDisableAuth {
		if _, err := s.authenticate(r); err != nil {
			return nil, err
		}
	}
	p := strings.TrimRight(s.opts.RootPrefix, "/") + "/" + strings.Trim(s.opts.WebhookURL, "/")
	sub := strings.Trim(strings.TrimPrefix(r.URL.Path, p), "/")
	tag := "salt/netapi/hook"
	if sub != "" {
		tag += "/" + sub
	}
	body, err := decodeBody(r)
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = payload.NewMap()
	}
	headers := payload.NewMap()
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.EqualFold(k, "X-Auth-Token") || strings.EqualFold(k, "Cookie") {
			continue
		}
		headers.Set(k, r.Header.Get(k))
	}
	data := payload.NewMap("body", rawBodyText(body), "post", body, "headers", headers)
	if err := s.fireEvent(r.Context(), tag, data); err != nil {
		s.log.Error("cannot fire the hook event", "tag", tag, "err", err)
		return payload.NewMap("success", false), nil
	}
	return payload.NewMap("success", true), nil
}

func rawBodyText(v any) string {
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return ""
	}
	return string(b)
}

// stats is /stats: request counters of this server.
func (s *Server) stats(r *http.Request) (any, error) {
	if !s.opts.StatsDisableAuth {
		if _, err := s.authenticate(r); err != nil {
			return nil, err
		}
	}
	up := time.Since(s.start)
	return payload.NewMap("Application Uptime", up.Seconds(), "Requests",
		payload.NewMap("Current Requests", int64(1), "Total Requests", s.requests.Load())), nil
}
