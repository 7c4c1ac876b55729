package nats

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gsalt/gsalt/event"
)

// ErrConfig is matched (errors.Is) by every error about the nats option.
var ErrConfig = errors.New("nats: invalid configuration")

// Encodings of mirrored events.
const (
	EncodingJSON    = "json"
	EncodingMsgpack = "msgpack"
)

// Defaults of the nats option.
const (
	DefaultPrefix          = "salt"
	DefaultQueueSize       = 10000
	DefaultReconnectWait   = 500 * time.Millisecond
	DefaultReconnectMax    = 30 * time.Second
	DefaultReconnectBuffer = 8 << 20
	DefaultConnectTimeout  = 5 * time.Second
	DefaultStream          = "GSALT"
	DefaultAckWait         = 30 * time.Second
	DefaultMaxDeliver      = 10
	DefaultStreamMaxAge    = 7 * 24 * time.Hour
	DefaultStreamMaxMsgs   = 100000
	// MaxQueueSize bounds queue_size.
	MaxQueueSize = event.MaxQueue
)

// Config is the parsed nats option of gsalt-master (see the package
// documentation for the YAML keys).
type Config struct {
	Servers          []string
	Name             string
	Prefix           string
	Publish          bool
	Include, Exclude []string
	Encoding         string
	EscapeTags       bool
	Fire             bool
	FireInclude      []string
	FireExclude      []string
	Subscribe        []Mapping
	QueueGroup       string
	JetStream        *JetStreamConfig
	TLS              *TLSConfig
	User, Password   string
	Token            string
	Creds            string
	NKey             string
	QueueSize        int
	ReconnectWait    time.Duration
	ReconnectMax     time.Duration
	ReconnectBuffer  int
	ConnectTimeout   time.Duration
}

// JetStreamConfig makes inbound subjects durable: they are read from a
// stream through a durable pull consumer instead of plain subscriptions.
type JetStreamConfig struct {
	Stream     string
	Durable    string
	Create     bool
	Subjects   []string // the stream's subjects when created (default: the inbound subjects)
	MaxAge     time.Duration
	MaxMsgs    int64
	AckWait    time.Duration
	MaxDeliver int
	// StartDelay postpones consuming after the bridge starts, so that
	// minions and proxies reconnect to a restarted master before the
	// reactions to stored events publish to them.
	StartDelay time.Duration
}

// TLSConfig holds the client's TLS files.
type TLSConfig struct {
	Cert, Key, CA string
	ServerName    string
	Insecure      bool
}

// Mapping turns messages on a foreign subject into bus events: Subject is
// a NATS subject pattern (tokens, "*" and a final ">"), Tag a template
// whose {N} are the pattern's wildcards (1-based), {0} and {subject} the
// whole subject with "." as "/".
type Mapping struct {
	Subject string
	Tag     string
	Queue   string

	pat  []string // subject tokens
	tmpl []tmplPart
	fire bool // the <prefix>.fire.> subscription
}

// Parse reads the nats option: nil (unset) or false gives (nil, nil); a
// mapping (or a URL string, short for {url: URL}) gives a Config or an
// error matching ErrConfig. masterID names the default durable consumer
// and connection.
func Parse(v any, masterID string) (*Config, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !x {
			return nil, nil
		}
		return nil, cfgErr("nats", "want a mapping, got True")
	case string:
		return parseMap(map[string]any{"url": x}, masterID)
	case map[string]any:
		return parseMap(x, masterID)
	}
	return nil, cfgErr("nats", fmt.Sprintf("want a mapping, got %T", v))
}

func cfgErr(key, msg string) error {
	return fmt.Errorf("%w: %s: %s", ErrConfig, key, msg)
}

var topKeys = []string{
	"url", "servers", "name", "subject_prefix", "publish", "include", "exclude", "encoding", "tag_escape",
	"fire", "fire_include", "fire_exclude", "subscribe", "queue_group", "jetstream", "tls",
	"user", "password", "token", "creds", "nkey", "queue_size", "reconnect_wait", "reconnect_wait_max",
	"reconnect_buffer", "connect_timeout",
}

func parseMap(m map[string]any, masterID string) (*Config, error) {
	p := &parser{m: m, path: "nats"}
	if err := p.known(topKeys); err != nil {
		return nil, err
	}
	c := &Config{
		Prefix: DefaultPrefix, Publish: true, Include: []string{"*"}, Encoding: EncodingJSON, EscapeTags: true,
		Fire: true, FireInclude: []string{"*"}, QueueSize: DefaultQueueSize, ReconnectWait: DefaultReconnectWait,
		ReconnectMax: DefaultReconnectMax, ReconnectBuffer: DefaultReconnectBuffer, ConnectTimeout: DefaultConnectTimeout,
		Name: "gsalt-master " + masterID,
	}
	c.Servers = p.strList("url", nil)
	c.Servers = append(c.Servers, p.strList("servers", nil)...)
	if len(c.Servers) == 0 {
		c.Servers = []string{"nats://127.0.0.1:4222"}
	}
	for _, u := range c.Servers {
		if err := checkURL(u); err != nil {
			return nil, cfgErr("nats.url", err.Error())
		}
	}
	c.Name = p.str("name", c.Name)
	c.Prefix = p.str("subject_prefix", c.Prefix)
	c.Publish = p.boolean("publish", c.Publish)
	c.Include = p.strList("include", c.Include)
	c.Exclude = p.strList("exclude", nil)
	c.Encoding = strings.ToLower(p.str("encoding", c.Encoding))
	c.EscapeTags = p.boolean("tag_escape", c.EscapeTags)
	c.Fire = p.boolean("fire", c.Fire)
	c.FireInclude = p.strList("fire_include", c.FireInclude)
	c.FireExclude = p.strList("fire_exclude", nil)
	c.QueueGroup = p.str("queue_group", "")
	c.User = p.str("user", "")
	c.Password = p.str("password", "")
	c.Token = p.str("token", "")
	c.Creds = p.str("creds", "")
	c.NKey = p.str("nkey", "")
	c.QueueSize = p.integer("queue_size", c.QueueSize)
	c.ReconnectWait = p.seconds("reconnect_wait", c.ReconnectWait)
	c.ReconnectMax = p.seconds("reconnect_wait_max", c.ReconnectMax)
	c.ReconnectBuffer = p.integer("reconnect_buffer", c.ReconnectBuffer)
	c.ConnectTimeout = p.seconds("connect_timeout", c.ConnectTimeout)
	if p.err != nil {
		return nil, p.err
	}
	if c.Encoding != EncodingJSON && c.Encoding != EncodingMsgpack {
		return nil, cfgErr("nats.encoding", fmt.Sprintf("want json or msgpack, got %q", c.Encoding))
	}
	if c.QueueSize < 1 || c.QueueSize > MaxQueueSize {
		return nil, cfgErr("nats.queue_size", fmt.Sprintf("want 1 to %d, got %d", MaxQueueSize, c.QueueSize))
	}
	if c.ReconnectWait <= 0 || c.ReconnectMax < c.ReconnectWait {
		return nil, cfgErr("nats.reconnect_wait", "want 0 < reconnect_wait <= reconnect_wait_max")
	}
	if c.ConnectTimeout <= 0 {
		return nil, cfgErr("nats.connect_timeout", "want a positive number of seconds")
	}
	if c.Prefix != "" {
		if err := validSubject(c.Prefix, false); err != nil {
			return nil, cfgErr("nats.subject_prefix", err.Error())
		}
	}
	if (c.Token != "") && (c.User != "" || c.NKey != "" || c.Creds != "") {
		return nil, cfgErr("nats.token", "token cannot be combined with user, nkey or creds")
	}
	if c.NKey != "" && c.Creds != "" {
		return nil, cfgErr("nats.nkey", "nkey cannot be combined with creds (the creds file holds the seed)")
	}
	for _, key := range []string{"include", "exclude", "fire_include", "fire_exclude"} {
		var list []string
		switch key {
		case "include":
			list = c.Include
		case "exclude":
			list = c.Exclude
		case "fire_include":
			list = c.FireInclude
		default:
			list = c.FireExclude
		}
		if _, err := globs(list); err != nil {
			return nil, cfgErr("nats."+key, err.Error())
		}
	}
	if c.Fire {
		subj := "fire.>"
		if c.Prefix != "" {
			subj = c.Prefix + "." + subj
		}
		c.Subscribe = append(c.Subscribe, Mapping{Subject: subj, Queue: c.QueueGroup, fire: true, pat: strings.Split(subj, ".")})
	}
	if v, ok := m["subscribe"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, cfgErr("nats.subscribe", fmt.Sprintf("want a list, got %T", v))
		}
		for i, it := range list {
			key := fmt.Sprintf("nats.subscribe[%d]", i)
			im, ok := it.(map[string]any)
			if !ok {
				return nil, cfgErr(key, fmt.Sprintf("want a mapping with subject and tag, got %T", it))
			}
			ip := &parser{m: im, path: key}
			if err := ip.known([]string{"subject", "tag", "queue_group"}); err != nil {
				return nil, err
			}
			mp := Mapping{Subject: ip.str("subject", ""), Tag: ip.str("tag", ""), Queue: ip.str("queue_group", c.QueueGroup)}
			if ip.err != nil {
				return nil, ip.err
			}
			if err := mp.compile(); err != nil {
				return nil, cfgErr(key, err.Error())
			}
			c.Subscribe = append(c.Subscribe, mp)
		}
	}
	if v, ok := m["tls"]; ok && v != nil {
		tm, ok := v.(map[string]any)
		if !ok {
			return nil, cfgErr("nats.tls", fmt.Sprintf("want a mapping, got %T", v))
		}
		tp := &parser{m: tm, path: "nats.tls"}
		if err := tp.known([]string{"cert", "key", "ca", "server_name", "insecure_skip_verify"}); err != nil {
			return nil, err
		}
		c.TLS = &TLSConfig{Cert: tp.str("cert", ""), Key: tp.str("key", ""), CA: tp.str("ca", ""),
			ServerName: tp.str("server_name", ""), Insecure: tp.boolean("insecure_skip_verify", false)}
		if tp.err != nil {
			return nil, tp.err
		}
		if (c.TLS.Cert == "") != (c.TLS.Key == "") {
			return nil, cfgErr("nats.tls", "cert and key go together")
		}
	}
	if v, ok := m["jetstream"]; ok && v != nil && v != false {
		js := &JetStreamConfig{Stream: DefaultStream, Durable: durableName(masterID), Create: true,
			MaxAge: DefaultStreamMaxAge, MaxMsgs: DefaultStreamMaxMsgs, AckWait: DefaultAckWait, MaxDeliver: DefaultMaxDeliver}
		switch x := v.(type) {
		case bool:
		case map[string]any:
			jp := &parser{m: x, path: "nats.jetstream"}
			if err := jp.known([]string{"stream", "durable", "create", "subjects", "max_age", "max_msgs", "ack_wait", "max_deliver", "start_delay"}); err != nil {
				return nil, err
			}
			js.Stream = jp.str("stream", js.Stream)
			js.Durable = jp.str("durable", js.Durable)
			js.Create = jp.boolean("create", js.Create)
			js.Subjects = jp.strList("subjects", nil)
			js.MaxAge = jp.seconds("max_age", js.MaxAge)
			js.MaxMsgs = int64(jp.integer("max_msgs", int(js.MaxMsgs)))
			js.AckWait = jp.seconds("ack_wait", js.AckWait)
			js.MaxDeliver = jp.integer("max_deliver", js.MaxDeliver)
			js.StartDelay = jp.seconds("start_delay", 0)
			if jp.err != nil {
				return nil, jp.err
			}
		default:
			return nil, cfgErr("nats.jetstream", fmt.Sprintf("want a mapping or True, got %T", v))
		}
		for _, n := range []string{js.Stream, js.Durable} {
			if n == "" || strings.ContainsAny(n, ".*> \t\r\n/\\") {
				return nil, cfgErr("nats.jetstream", fmt.Sprintf("invalid stream or durable name %q", n))
			}
		}
		if js.AckWait <= 0 {
			return nil, cfgErr("nats.jetstream.ack_wait", "want a positive number of seconds")
		}
		if len(c.Subscribe) == 0 {
			return nil, cfgErr("nats.jetstream", "no inbound subject (fire is off and subscribe is empty)")
		}
		for _, s := range js.Subjects {
			if err := validSubject(s, true); err != nil {
				return nil, cfgErr("nats.jetstream.subjects", err.Error())
			}
		}
		c.JetStream = js
	}
	return c, nil
}

// checkURL accepts what the NATS client connects to: host:port or a
// nats://, tls://, ws:// or wss:// URL with a host (credentials allowed).
func checkURL(raw string) error {
	s := raw
	if !strings.Contains(s, "://") {
		s = "nats://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q: %w", raw, err)
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("%q: want a nats://, tls://, ws:// or wss:// URL", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q: no host", raw)
	}
	return nil
}

// durableName derives the default durable consumer name from the master
// id (characters NATS names cannot hold become "_").
func durableName(id string) string {
	if id == "" {
		id = "master"
	}
	b := []byte("gsalt-" + id)
	for i, ch := range b {
		if ch <= ' ' || ch == '.' || ch == '*' || ch == '>' || ch == '/' || ch == '\\' || ch >= 0x7f {
			b[i] = '_'
		}
	}
	return string(b)
}

// inboundSubjects lists the subjects of the fire and subscribe mappings.
func (c *Config) inboundSubjects() []string {
	var out []string
	for _, m := range c.Subscribe {
		if !slices.Contains(out, m.Subject) {
			out = append(out, m.Subject)
		}
	}
	return out
}

// parser reads typed values from one mapping, keeping the first error.
type parser struct {
	m    map[string]any
	path string
	err  error
}

func (p *parser) known(keys []string) error {
	for _, k := range slices.Sorted(maps.Keys(p.m)) {
		if !slices.Contains(keys, k) {
			return cfgErr(p.path, fmt.Sprintf("unknown key %q (known: %s)", k, strings.Join(keys, ", ")))
		}
	}
	return nil
}

func (p *parser) fail(key, want string, got any) {
	if p.err == nil {
		p.err = cfgErr(p.path+"."+key, fmt.Sprintf("want %s, got %#v", want, got))
	}
}

func (p *parser) str(key, def string) string {
	v, ok := p.m[key]
	if !ok || v == nil {
		return def
	}
	s, ok := v.(string)
	if !ok {
		p.fail(key, "a string", v)
		return def
	}
	return s
}

func (p *parser) boolean(key string, def bool) bool {
	v, ok := p.m[key]
	if !ok || v == nil {
		return def
	}
	b, ok := v.(bool)
	if !ok {
		p.fail(key, "True or False", v)
		return def
	}
	return b
}

func (p *parser) integer(key string, def int) int {
	v, ok := p.m[key]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
	}
	p.fail(key, "an integer", v)
	return def
}

func (p *parser) seconds(key string, def time.Duration) time.Duration {
	v, ok := p.m[key]
	if !ok || v == nil {
		return def
	}
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		p.fail(key, "a number of seconds", v)
		return def
	}
	if f < 0 || f > 1e9 || math.IsNaN(f) {
		p.fail(key, "a number of seconds", v)
		return def
	}
	return time.Duration(f * float64(time.Second))
}

func (p *parser) strList(key string, def []string) []string {
	v, ok := p.m[key]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case string:
		var out []string
		for _, s := range strings.Split(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	case []any:
		out := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				p.fail(key, "a list of strings", v)
				return def
			}
			out = append(out, s)
		}
		return out
	}
	p.fail(key, "a string or a list of strings", v)
	return def
}

// globs compiles fnmatch patterns.
func globs(list []string) ([]event.Matcher, error) {
	out := make([]event.Matcher, 0, len(list))
	for _, g := range list {
		m, err := event.Glob(g)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
