// Package netapi is gsalt-api: Salt's rest_cherrypy HTTP API (salt-api)
// in front of a gsalt (or Salt) master. It reads the rest_cherrypy section
// of the master config, authenticates with the master's mk_token/get_token
// clear commands and runs lowstate chunks through the master's clear
// publish, runner and wheel commands, so every request passes the
// master's eauth ACLs. Events come from the master event bus.
package netapi

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gsalt/gsalt/config"
)

// Options are the rest_cherrypy settings gsalt-api honours.
type Options struct {
	Host               string
	Port               int
	SSLCrt, SSLKey     string
	DisableSSL         bool
	Debug              bool
	RootPrefix         string
	WebhookURL         string // "/hook"
	WebhookDisableAuth bool
	StatsDisableAuth   bool
	CORSOrigin         []string
	MaxRequestBody     int64
	ExpireResponses    bool
	// EnableClients is netapi_enable_clients (Salt 3006: nothing enabled
	// unless listed).
	EnableClients []string
	ReadTimeout   time.Duration
	IdleTimeout   time.Duration
	AccessLog     string
	// App is rest_cherrypy:app, the HTML file served at AppPath (and, for
	// browsers asking for text/html, at any other path); "" serves
	// gsalt-api's own small page at AppPath.
	App, AppPath string
	// Static is rest_cherrypy:static, a directory served at StaticPath.
	Static, StaticPath string
	// EnableSessions is rest_cherrypy:enable_sessions (default true). When
	// false, as in salt-api, /login, /logout, /minions and /jobs do not
	// exist (404) and no session cookie is set or read: tokens travel in
	// the X-Auth-Token header (from /token) or in the lowstate (/run).
	EnableSessions bool
}

// OptionsFrom reads rest_cherrypy and netapi_enable_clients from cfg.
func OptionsFrom(cfg *config.Master) (Options, error) {
	o := Options{Host: "0.0.0.0", Port: 8000, RootPrefix: "/", WebhookURL: "/hook", AppPath: "/app", StaticPath: "/static",
		MaxRequestBody: 1 << 20, ExpireResponses: true, EnableSessions: true, ReadTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	raw, _ := cfg.Opts.Get("rest_cherrypy")
	rc, _ := raw.(map[string]any)
	if raw != nil && rc == nil {
		return o, fmt.Errorf("netapi: rest_cherrypy must be a mapping")
	}
	str := func(k string, dst *string) {
		if v, ok := rc[k]; ok && v != nil {
			*dst = fmt.Sprint(v)
		}
	}
	boolean := func(k string, dst *bool) {
		if v, ok := rc[k]; ok {
			switch x := v.(type) {
			case bool:
				*dst = x
			case string:
				b, _ := strconv.ParseBool(x)
				*dst = b
			}
		}
	}
	num := func(k string) (int64, bool, error) {
		v, ok := rc[k]
		if !ok || v == nil {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("netapi: rest_cherrypy:%s: %w", k, err)
		}
		return n, true, nil
	}
	str("host", &o.Host)
	str("ssl_crt", &o.SSLCrt)
	str("ssl_key", &o.SSLKey)
	str("root_prefix", &o.RootPrefix)
	str("webhook_url", &o.WebhookURL)
	str("log_access_file", &o.AccessLog)
	str("app", &o.App)
	str("app_path", &o.AppPath)
	str("static", &o.Static)
	str("static_path", &o.StaticPath)
	boolean("disable_ssl", &o.DisableSSL)
	boolean("debug", &o.Debug)
	boolean("webhook_disable_auth", &o.WebhookDisableAuth)
	boolean("stats_disable_auth", &o.StatsDisableAuth)
	boolean("expire_responses", &o.ExpireResponses)
	boolean("enable_sessions", &o.EnableSessions)
	if n, ok, err := num("port"); err != nil {
		return o, err
	} else if ok {
		o.Port = int(n)
	}
	if n, ok, err := num("max_request_body_size"); err != nil {
		return o, err
	} else if ok && n > 0 {
		o.MaxRequestBody = n
	}
	if n, ok, err := num("socket_timeout"); err != nil {
		return o, err
	} else if ok && n > 0 {
		o.ReadTimeout = time.Duration(n) * time.Second
	}
	switch c := rc["cors_origin"].(type) {
	case string:
		o.CORSOrigin = []string{c}
	case []any:
		for _, e := range c {
			o.CORSOrigin = append(o.CORSOrigin, fmt.Sprint(e))
		}
	}
	if l, ok := cfg.Opts.Get("netapi_enable_clients"); ok {
		if ll, ok := l.([]any); ok {
			for _, e := range ll {
				o.EnableClients = append(o.EnableClients, fmt.Sprint(e))
			}
		}
	}
	if !o.DisableSSL && (o.SSLCrt == "" || o.SSLKey == "") {
		return o, fmt.Errorf("netapi: rest_cherrypy needs ssl_crt and ssl_key unless disable_ssl is True")
	}
	return o, nil
}
