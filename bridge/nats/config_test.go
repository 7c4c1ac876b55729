package nats

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
)

// TestParseFromMasterConfig: the option as a master.d file gives it,
// through gsalt's configuration loader.
func TestParseFromMasterConfig(t *testing.T) {
	dir := t.TempDir()
	conf := `nats:
  url: [nats://10.0.0.1:4222, nats://10.0.0.2:4222]
  subject_prefix: gsalt
  include: ['salt/job/*', 'intended/*']
  exclude: ['salt/auth']
  encoding: msgpack
  queue_group: masters
  subscribe:
    - subject: 'dc1.*.configure'
      tag: 'nats/configure/{1}'
    - subject: 'dc2.>'
      tag: 'nats/dc2/{1}'
      queue_group: ''
  jetstream:
    stream: INTENDED
    ack_wait: 2.5
    start_delay: 1.5
    max_age: 3600
  tls: {cert: /etc/c.pem, key: /etc/k.pem, ca: /etc/ca.pem}
  user: salt
  password: secret
  queue_size: 500
  reconnect_wait: 0.25
  reconnect_wait_max: 4
`
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte("id: mm\n"+conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMaster(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := cfg.Opts.Get("nats")
	c, err := Parse(v, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Servers, []string{"nats://10.0.0.1:4222", "nats://10.0.0.2:4222"}) || c.Prefix != "gsalt" ||
		c.Encoding != EncodingMsgpack || c.QueueSize != 500 || c.ReconnectWait != 250*time.Millisecond ||
		c.ReconnectMax != 4*time.Second || c.User != "salt" || c.Password != "secret" || !c.Publish || !c.Fire {
		t.Errorf("parsed %+v", c)
	}
	if !reflect.DeepEqual(c.Include, []string{"salt/job/*", "intended/*"}) || !reflect.DeepEqual(c.Exclude, []string{"salt/auth"}) {
		t.Errorf("filters %v %v", c.Include, c.Exclude)
	}
	if got := c.inboundSubjects(); !reflect.DeepEqual(got, []string{"gsalt.fire.>", "dc1.*.configure", "dc2.>"}) {
		t.Errorf("inbound %v", got)
	}
	if c.Subscribe[0].Queue != "masters" || c.Subscribe[1].Queue != "masters" || c.Subscribe[2].Queue != "" {
		t.Errorf("queue groups %+v", c.Subscribe)
	}
	js := c.JetStream
	if js == nil || js.Stream != "INTENDED" || js.Durable != "gsalt-mm" || !js.Create || js.AckWait != 2500*time.Millisecond ||
		js.MaxAge != time.Hour || js.MaxDeliver != DefaultMaxDeliver || js.StartDelay != 1500*time.Millisecond {
		t.Errorf("jetstream %+v", js)
	}
	if c.TLS == nil || c.TLS.Cert != "/etc/c.pem" || c.TLS.CA != "/etc/ca.pem" {
		t.Errorf("tls %+v", c.TLS)
	}
}

func TestParseDefaults(t *testing.T) {
	for _, v := range []any{nil, false} {
		if c, err := Parse(v, "m"); c != nil || err != nil {
			t.Errorf("Parse(%v) = %v, %v", v, c, err)
		}
	}
	c, err := Parse(map[string]any{}, "web.1 x")
	if err != nil {
		t.Fatal(err)
	}
	if c.Prefix != "salt" || c.Servers[0] != "nats://127.0.0.1:4222" || c.Encoding != "json" || !c.EscapeTags ||
		c.QueueSize != DefaultQueueSize || c.JetStream != nil || len(c.Subscribe) != 1 || c.Subscribe[0].Subject != "salt.fire.>" {
		t.Errorf("defaults %+v", c)
	}
	if c, err = Parse("nats://h:4222", "m"); err != nil || c.Servers[0] != "nats://h:4222" || !c.Publish {
		t.Errorf("a URL string: %+v %v", c, err)
	}
	c, err = Parse(map[string]any{"jetstream": true, "url": "nats://a:1,nats://b:2"}, "web.1 x")
	if err != nil {
		t.Fatal(err)
	}
	if c.JetStream == nil || c.JetStream.Durable != "gsalt-web_1_x" || len(c.Servers) != 2 {
		t.Errorf("jetstream: True: %+v %+v", c, c.JetStream)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{true, "nats: want a mapping, got True"},
		{"http://x", "nats.url: \"http://x\": want a nats://"},
		{int64(4222), "nats: want a mapping, got int64"},
		{map[string]any{"urls": "x"}, `nats: unknown key "urls"`},
		{map[string]any{"publish": "yes"}, "nats.publish: want True or False"},
		{map[string]any{"queue_size": 0}, "nats.queue_size: want 1 to"},
		{map[string]any{"queue_size": "10"}, "nats.queue_size: want an integer"},
		{map[string]any{"encoding": "xml"}, "nats.encoding: want json or msgpack"},
		{map[string]any{"subject_prefix": "a..b"}, "nats.subject_prefix"},
		{map[string]any{"subject_prefix": "a.*"}, "holds a wildcard"},
		{map[string]any{"reconnect_wait": -1}, "nats.reconnect_wait: want a number of seconds"},
		{map[string]any{"reconnect_wait": 5, "reconnect_wait_max": 1}, "reconnect_wait <= reconnect_wait_max"},
		{map[string]any{"subscribe": "dc1.*"}, "nats.subscribe: want a list"},
		{map[string]any{"subscribe": []any{"dc1.*"}}, "nats.subscribe[0]: want a mapping"},
		{map[string]any{"subscribe": []any{map[string]any{"subject": "dc1.*", "tag": "t/{2}"}}}, "nats.subscribe[0]: invalid tag template"},
		{map[string]any{"subscribe": []any{map[string]any{"subject": "dc1.*", "tags": "t"}}}, `nats.subscribe[0]: unknown key "tags"`},
		{map[string]any{"tls": map[string]any{"cert": "/c"}}, "cert and key go together"},
		{map[string]any{"tls": "yes"}, "nats.tls: want a mapping"},
		{map[string]any{"token": "t", "user": "u"}, "token cannot be combined"},
		{map[string]any{"nkey": "/s", "creds": "/c"}, "nkey cannot be combined"},
		{map[string]any{"jetstream": map[string]any{"stream": "a.b"}}, "invalid stream or durable name"},
		{map[string]any{"jetstream": map[string]any{"ack_wait": 0}}, "ack_wait: want a positive"},
		{map[string]any{"jetstream": true, "fire": false}, "no inbound subject"},
		{map[string]any{"jetstream": map[string]any{"subjects": []any{"a..b"}}}, "nats.jetstream.subjects"},
		{map[string]any{"include": []any{1}}, "nats.include: want a list of strings"},
		{map[string]any{"url": "foo bar"}, `nats.url: "foo bar"`},
		{map[string]any{"url": "http://x:4222"}, "want a nats://, tls://, ws:// or wss:// URL"},
		{map[string]any{"url": []any{"nats://a:1", "nats://:4222"}}, `nats.url: "nats://:4222": no host`},
		{map[string]any{"url": "nats://127.0.0.1:notaport"}, "invalid port"},
	} {
		_, err := Parse(c.v, "m")
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%v): %v, want %q", c.v, err, c.want)
		}
	}
}
