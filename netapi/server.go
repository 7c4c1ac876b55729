package netapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/cli/saltcli"
	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/pyyaml"
	"github.com/gsalt/gsalt/wire/payload"
)

// Server is gsalt-api. Create it with New and run it with Serve.
type Server struct {
	opts   Options
	cfg    *config.Master
	client *saltcli.Client
	log    *slog.Logger
	access *slog.Logger
	start  time.Time

	requests atomic.Int64
	tokens   *tokenCache
	// reqs counts requests for /metrics (RegisterHealth).
	reqs atomic.Pointer[prometheus.CounterVec]
}

// New builds a server for the master cfg describes.
func New(cfg *config.Master, opts Options, log, access *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	if access == nil {
		access = log
	}
	c := saltcli.NewClient(cfg, log)
	// Requests carry tokens or eauth credentials, never the root key.
	c.Key = ""
	c.User = "salt-api"
	return &Server{opts: opts, cfg: cfg, client: c, log: log, access: access, start: time.Now(), tokens: newTokenCache(nil)}
}

// httpError is an HTTP status with a message, rendered like CherryPy's
// error page.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func herr(code int, msg string) error { return &httpError{code, msg} }

// Handler returns the HTTP handler (routes under root_prefix).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	p := strings.TrimRight(s.opts.RootPrefix, "/")
	mux.HandleFunc(p+"/", s.wrap(s.root))
	// Without sessions salt-api leaves out the endpoints built on them
	// (their paths fall through to the root handler's 404).
	if s.opts.EnableSessions {
		mux.HandleFunc(p+"/login", s.wrap(s.login))
		mux.HandleFunc(p+"/logout", s.wrap(s.logout))
		mux.HandleFunc(p+"/minions", s.wrap(s.minions))
		mux.HandleFunc(p+"/minions/", s.wrap(s.minions))
		mux.HandleFunc(p+"/jobs", s.wrap(s.jobs))
		mux.HandleFunc(p+"/jobs/", s.wrap(s.jobs))
	}
	mux.HandleFunc(p+"/token", s.wrap(s.tokenEP))
	mux.HandleFunc(p+"/run", s.wrap(s.run))
	mux.HandleFunc(p+"/events", s.events)
	mux.HandleFunc(p+"/keys", s.keys)
	mux.HandleFunc(p+"/keys/", s.keys)
	mux.HandleFunc(p+"/stats", s.wrap(s.stats))
	hook := p + "/" + strings.Trim(s.opts.WebhookURL, "/")
	mux.HandleFunc(hook, s.wrap(s.hook))
	mux.HandleFunc(hook+"/", s.wrap(s.hook))
	mux.HandleFunc(p+"/ws", s.websocket)
	mux.HandleFunc(p+"/ws/", s.websocket)
	s.routeApp(mux, p)
	return s.logged(s.htmlOverride(mux, p))
}

// Serve answers requests on ln until ctx is done (TLS unless
// disable_ssl).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	if !s.opts.DisableSSL {
		cert, err := tls.LoadX509KeyPair(s.opts.SSLCrt, s.opts.SSLKey)
		if err != nil {
			return fmt.Errorf("netapi: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

type statusWriter struct {
	http.ResponseWriter
	code int
	n    int64
}

func (w *statusWriter) WriteHeader(c int) { w.code = c; w.ResponseWriter.WriteHeader(c) }
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController (and the WebSocket upgrade) reach
// the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hands the connection over (the WebSocket upgrade of /ws).
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("netapi: connection cannot be hijacked")
	}
	if w.code == 0 {
		w.code = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

// logged writes one access-log line per request and adds CORS headers
// when cors_origin is set.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		start := time.Now()
		if o := r.Header.Get("Origin"); o != "" && len(s.opts.CORSOrigin) > 0 {
			for _, allowed := range s.opts.CORSOrigin {
				if allowed == "*" || allowed == o {
					w.Header().Set("Access-Control-Allow-Origin", allowed)
					w.Header().Set("Access-Control-Expose-Headers", "GET, POST")
					w.Header().Set("Access-Control-Allow-Credentials", "true")
					break
				}
			}
		}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		s.countRequest(r.URL.Path, sw.code)
		s.access.Info("request", "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path,
			"status", sw.code, "bytes", sw.n, "duration", time.Since(start).String())
	})
}

// handler returns a value to send wrapped, or an error.
type handler func(r *http.Request) (any, error)

func (s *Server) wrap(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBody)
		if r.Method == http.MethodOptions && len(s.opts.CORSOrigin) > 0 {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
			w.Header().Set("Access-Control-Allow-Headers", "X-Auth-Token, Content-Type")
			w.WriteHeader(http.StatusOK)
			return
		}
		if s.opts.ExpireResponses {
			w.Header().Set("Cache-Control", "no-cache, no-store, must-revalidate")
			w.Header().Set("Expires", "0")
		}
		ret, err := h(r)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) {
				s.log.Error("request failed", "path", r.URL.Path, "err", err)
				msg := "An unexpected error occurred"
				if s.opts.Debug {
					msg = err.Error()
				}
				s.write(w, r, http.StatusInternalServerError, payload.NewMap("status", 500, "return", msg))
				return
			}
			writeErrorPage(w, he)
			return
		}
		if la, ok := ret.(*loginAnswer); ok {
			w.Header().Set("X-Auth-Token", la.token)
			http.SetCookie(w, &http.Cookie{Name: "session_id", Value: la.token, Path: "/", HttpOnly: true,
				Secure: !s.opts.DisableSSL, SameSite: http.SameSiteLaxMode})
			ret = la.body
		}
		if lo, ok := ret.(*logoutAnswer); ok {
			http.SetCookie(w, &http.Cookie{Name: "session_id", Value: "", Path: "/", MaxAge: -1})
			ret = lo.body
		}
		code := http.StatusOK
		if sa, ok := ret.(*statusAnswer); ok {
			code, ret = sa.code, sa.body
		}
		s.write(w, r, code, ret)
	}
}

// statusAnswer is a body sent with another status than 200.
type statusAnswer struct {
	code int
	body any
}

// writeErrorPage renders an HTTP error like CherryPy's default page.
func writeErrorPage(w http.ResponseWriter, he *httpError) {
	status := strconv.Itoa(he.code) + " " + http.StatusText(he.code)
	msg := he.msg
	if msg == "" {
		msg = defaultErrorText(he.code)
	}
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	w.WriteHeader(he.code)
	fmt.Fprintf(w, "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n<html>\n<head>\n    <meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\"></meta>\n    <title>%s</title>\n</head>\n    <body>\n        <h2>%s</h2>\n        <p>%s</p>\n    </body>\n</html>\n",
		status, status, htmlEscape(msg))
}

func defaultErrorText(code int) string {
	switch code {
	case 401:
		return "This server could not verify that you are authorized to access the document you requested."
	case 404:
		return "The path '/' was not found."
	case 406:
		return "Your client sent an Accept header that this resource cannot serve."
	}
	return "The server encountered an unexpected condition which prevented it from fulfilling the request."
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

// write renders v as JSON or YAML following the Accept header.
func (s *Server) write(w http.ResponseWriter, r *http.Request, code int, v any) {
	accept := r.Header.Get("Accept")
	ct := "application/json"
	switch {
	case accept == "" || strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*"):
	case strings.Contains(accept, "application/x-yaml"):
		ct = "application/x-yaml"
	case strings.Contains(accept, "text/yaml"):
		ct = "text/yaml"
	case strings.Contains(accept, "text/html"), strings.Contains(accept, "text/plain"):
	default:
		writeErrorPage(w, &httpError{code: 406})
		return
	}
	var body []byte
	var err error
	if ct == "application/json" {
		body, err = json.Marshal(jsonable(v))
	} else {
		var txt string
		txt, err = pyyaml.Dump(v, pyyaml.Options{})
		body = []byte(txt)
	}
	if err != nil {
		s.log.Error("cannot encode a response", "err", err)
		code, body = 500, []byte(`{"status": 500, "return": "An unexpected error occurred"}`)
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// jsonable turns payload values into what encoding/json renders like
// Python's json.dumps ([]byte as text).
func jsonable(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		return x
	case []byte:
		return string(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = jsonable(x[i])
		}
		return out
	}
	return v
}

// decodeBody reads the request body as JSON, YAML or form data (Salt's
// hypermedia_in); an empty body gives nil.
func decodeBody(r *http.Request) (any, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, herr(http.StatusRequestEntityTooLarge, "The entity sent with the request exceeds the maximum allowed bytes.")
		}
		return nil, herr(http.StatusBadRequest, "Could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	ct := r.Header.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	switch strings.TrimSpace(strings.ToLower(ct)) {
	case "application/json":
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, herr(http.StatusBadRequest, "Invalid JSON document")
		}
		return fromJSON(v), nil
	case "application/x-yaml", "text/yaml":
		var v any
		if err := yaml.Unmarshal(body, &v); err != nil {
			return nil, herr(http.StatusBadRequest, "Invalid YAML document")
		}
		return fromJSON(v), nil
	case "text/plain":
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return string(body), nil
		}
		return fromJSON(v), nil
	case "application/x-www-form-urlencoded":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, herr(http.StatusBadRequest, "Invalid form data")
		}
		m := payload.NewMap()
		for k, vs := range vals {
			if len(vs) == 1 && k != "arg" {
				m.Set(k, vs[0])
				continue
			}
			l := make([]any, len(vs))
			for i, s := range vs {
				l[i] = s
			}
			m.Set(k, l)
		}
		return m, nil
	}
	return nil, herr(http.StatusNotAcceptable, "Content type not supported")
}

// fromJSON converts decoded JSON/YAML into payload values, bounding depth.
func fromJSON(v any) any { return fromJSONDepth(v, 0) }

func fromJSONDepth(v any, depth int) any {
	if depth > 64 {
		return nil
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case int:
		return int64(x)
	case map[string]any:
		m := payload.FromGo(map[string]any{}).(*payload.Map)
		for _, k := range sortedKeys(x) {
			m.Set(k, fromJSONDepth(x[k], depth+1))
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = fromJSONDepth(x[i], depth+1)
		}
		return out
	}
	return v
}

// lowstate is Salt's lowdata_fmt: a mapping becomes a one-chunk list; a
// non-list "arg" becomes a list.
func lowstate(v any) ([]*payload.Map, error) {
	var raw []any
	switch x := v.(type) {
	case *payload.Map:
		raw = []any{x}
	case []any:
		raw = x
	case nil:
		return nil, nil
	default:
		return nil, herr(http.StatusBadRequest, "Lowstates must be a list")
	}
	out := make([]*payload.Map, 0, len(raw))
	for _, c := range raw {
		m, ok := c.(*payload.Map)
		if !ok {
			return nil, herr(http.StatusBadRequest, "Lowstates must be a list of mappings")
		}
		if a, ok := m.Get("arg"); ok {
			if _, isList := a.([]any); !isList {
				m.Set("arg", []any{a})
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// sessionToken returns the token of the request (X-Auth-Token header or,
// with sessions, the session_id cookie).
func (s *Server) sessionToken(r *http.Request) string {
	if t := r.Header.Get("X-Auth-Token"); t != "" {
		return t
	}
	if !s.opts.EnableSessions {
		return ""
	}
	if c, err := r.Cookie("session_id"); err == nil {
		return c.Value
	}
	return ""
}

// authenticate checks the request's token with the master (get_token);
// it returns the token data or a 401.
func (s *Server) authenticate(r *http.Request) (*payload.Map, error) {
	tok := s.sessionToken(r)
	if tok == "" {
		return nil, herr(http.StatusUnauthorized, "")
	}
	if _, err := hex.DecodeString(tok); err != nil {
		return nil, herr(http.StatusUnauthorized, "Invalid token")
	}
	if td := s.tokens.get(tok); td != nil {
		return td, nil
	}
	td, err := s.getToken(r.Context(), tok)
	if err != nil {
		return nil, err
	}
	if td == nil || td.Str("token") == "" {
		return nil, herr(http.StatusUnauthorized, "")
	}
	s.tokens.put(tok, td)
	return td, nil
}

func (s *Server) getToken(ctx context.Context, tok string) (*payload.Map, error) {
	rep, err := s.client.Request(ctx, payload.NewMap("cmd", "get_token", "token", tok), 10*time.Second)
	if err != nil {
		return nil, herr(http.StatusServiceUnavailable, "Salt Master is not available.")
	}
	m, _ := rep.(*payload.Map)
	return m, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
