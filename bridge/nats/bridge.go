package nats

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// Headers of mirrored messages.
const (
	// TagHeader holds the event's tag verbatim (the subject may be escaped
	// and cannot tell "/" from "."). On a message to <prefix>.fire.> it
	// gives the tag to fire instead of the subject's tail.
	TagHeader = "Gsalt-Tag"
	// OriginHeader names the bridge that published a mirror; a bridge
	// ignores inbound messages carrying its own origin (no loops).
	OriginHeader = "Gsalt-Origin"
)

// Data keys of events fired from NATS.
const (
	// PayloadKey holds a message body that is not a JSON object (nor a
	// msgpack map with encoding msgpack): a string, or bytes when it is
	// not UTF-8.
	PayloadKey = "payload"
	// SubjectKey holds the message's subject (unless the body has it).
	SubjectKey = "nats_subject"
)

// dropLogEvery: drops are logged on the first and then every this many.
const dropLogEvery = 1000

// maxPendingBytes bounds the bytes a core subscription may queue.
const maxPendingBytes = 64 << 20

// Stats counts what the bridge did.
type Stats struct {
	Published      uint64 // events mirrored to NATS
	PublishDropped uint64 // mirrors NATS refused (outage buffer full, connection closed, too large)
	QueueDropped   uint64 // events lost because the bridge's bus queue was full
	Skipped        uint64 // events not mirrored: tag filters, unmappable tags, the fire namespace
	Received       uint64 // inbound NATS messages
	Fired          uint64 // events fired on the bus from NATS
	FireErrors     uint64 // inbound messages the bus refused
	Ignored        uint64 // inbound messages not fired: own mirrors, fire filters, no mapping
	Reconnects     uint64 // reconnections to NATS
	Connected      bool   // connected now
}

// Bridge mirrors a master's event bus to NATS and fires NATS messages into
// it.
type Bridge struct {
	cfg    *Config
	bus    *event.Bus
	log    *slog.Logger
	nc     *natsgo.Conn
	origin string
	sub    *event.Subscription

	include, exclude         []event.Matcher
	fireInclude, fireExclude []event.Matcher
	fireNS                   string // <prefix>.fire: mirrors there would be fired again

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	subs   []*natsgo.Subscription

	published, pubDropped, skipped       atomic.Uint64
	received, fired, fireErrors, ignored atomic.Uint64
	reconnects                           atomic.Uint64
	jsReady                              atomic.Bool
}

// StartMaster starts the bridge configured by the master's nats option;
// it returns nil, nil when the option is unset. The caller closes it
// before the bus.
func StartMaster(ctx context.Context, cfg *config.Master, bus *event.Bus, log *slog.Logger) (*Bridge, error) {
	v, _ := cfg.Opts.Get("nats")
	c, err := Parse(v, cfg.ID)
	if err != nil || c == nil {
		return nil, err
	}
	return Start(ctx, c, bus, log)
}

// Start connects to NATS (in the background: an unreachable server is
// retried with backoff and never fails Start), mirrors the bus when
// Publish is set and fires inbound subjects into it. Errors are about the
// configuration (TLS, credential files).
func Start(ctx context.Context, cfg *Config, bus *event.Bus, log *slog.Logger) (*Bridge, error) {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "nats")
	b := &Bridge{cfg: cfg, bus: bus, log: log}
	var err error
	if b.include, err = globs(cfg.Include); err != nil {
		return nil, fmt.Errorf("%w: include: %w", ErrConfig, err)
	}
	if b.exclude, err = globs(cfg.Exclude); err != nil {
		return nil, fmt.Errorf("%w: exclude: %w", ErrConfig, err)
	}
	if b.fireInclude, err = globs(cfg.FireInclude); err != nil {
		return nil, fmt.Errorf("%w: fire_include: %w", ErrConfig, err)
	}
	if b.fireExclude, err = globs(cfg.FireExclude); err != nil {
		return nil, fmt.Errorf("%w: fire_exclude: %w", ErrConfig, err)
	}
	b.fireNS = "fire"
	if cfg.Prefix != "" {
		b.fireNS = cfg.Prefix + ".fire"
	}
	var rb [8]byte
	_, _ = rand.Read(rb[:])
	b.origin = hex.EncodeToString(rb[:])
	opts, err := b.options()
	if err != nil {
		return nil, err
	}
	b.nc, err = natsgo.Connect(strings.Join(cfg.Servers, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: connect: %w", ErrConfig, err)
	}
	b.ctx, b.cancel = context.WithCancel(ctx)
	if cfg.Publish {
		b.sub = bus.Subscribe(nil, cfg.QueueSize)
		b.wg.Add(1)
		go b.mirror()
	}
	if len(cfg.Subscribe) > 0 {
		if cfg.JetStream != nil {
			b.wg.Add(1)
			go b.runJetStream()
		} else if err := b.subscribeCore(); err != nil {
			b.Close()
			return nil, err
		}
	}
	go func() {
		<-b.ctx.Done()
		b.Close()
	}()
	log.Info("NATS bridge started", "servers", strings.Join(cfg.Servers, ","), "prefix", cfg.Prefix,
		"publish", cfg.Publish, "inbound", strings.Join(cfg.inboundSubjects(), " "), "jetstream", cfg.JetStream != nil)
	return b, nil
}

// options builds the connection options: reconnect forever with an
// exponential backoff, bounded outage buffer, TLS and credentials.
func (b *Bridge) options() ([]natsgo.Option, error) {
	c := b.cfg
	opts := []natsgo.Option{
		natsgo.Name(c.Name),
		natsgo.RetryOnFailedConnect(true),
		natsgo.MaxReconnects(-1),
		natsgo.ReconnectWait(c.ReconnectWait),
		natsgo.CustomReconnectDelay(backoff(c.ReconnectWait, c.ReconnectMax)),
		natsgo.ReconnectBufSize(c.ReconnectBuffer),
		natsgo.Timeout(c.ConnectTimeout),
		natsgo.ConnectHandler(func(nc *natsgo.Conn) {
			b.log.Info("connected to NATS", "server", nc.ConnectedUrlRedacted())
		}),
		natsgo.DisconnectErrHandler(func(_ *natsgo.Conn, err error) {
			if err != nil {
				b.log.Warn("disconnected from NATS; reconnecting", "err", err)
			}
		}),
		natsgo.ReconnectHandler(func(nc *natsgo.Conn) {
			b.reconnects.Add(1)
			b.log.Info("reconnected to NATS", "server", nc.ConnectedUrlRedacted())
		}),
		natsgo.ErrorHandler(func(_ *natsgo.Conn, s *natsgo.Subscription, err error) {
			subj := ""
			if s != nil {
				subj = s.Subject
			}
			b.log.Warn("NATS error", "subject", subj, "err", err)
		}),
	}
	if t := c.TLS; t != nil {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.Insecure} //nolint:gosec // opt-in
		if t.Cert != "" {
			pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
			if err != nil {
				return nil, fmt.Errorf("%w: tls: %w", ErrConfig, err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
		if t.CA != "" {
			pem, err := os.ReadFile(t.CA)
			if err != nil {
				return nil, fmt.Errorf("%w: tls.ca: %w", ErrConfig, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: tls.ca: no certificate in %s", ErrConfig, t.CA)
			}
			tc.RootCAs = pool
		}
		opts = append(opts, natsgo.Secure(tc))
	}
	if c.User != "" || c.Password != "" {
		opts = append(opts, natsgo.UserInfo(c.User, c.Password))
	}
	if c.Token != "" {
		opts = append(opts, natsgo.Token(c.Token))
	}
	if c.Creds != "" {
		if _, err := os.Stat(c.Creds); err != nil {
			return nil, fmt.Errorf("%w: creds: %w", ErrConfig, err)
		}
		opts = append(opts, natsgo.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		o, err := natsgo.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("%w: nkey: %w", ErrConfig, err)
		}
		opts = append(opts, o)
	}
	return opts, nil
}

// backoff doubles the wait from min up to max per attempt, with up to 25%
// jitter.
func backoff(lo, hi time.Duration) func(int) time.Duration {
	return func(attempts int) time.Duration {
		d := hi
		if attempts < 1 {
			attempts = 1
		}
		if n := attempts - 1; n < 40 && bits.Len64(uint64(lo))+n < 62 {
			d = min(lo<<n, hi)
		}
		return d + time.Duration(mrand.Int64N(int64(d)/4+1))
	}
}

// Close stops the bridge: subscriptions end, the connection is flushed
// (for at most a second) and closed. It is idempotent and safe on nil.
func (b *Bridge) Close() error {
	if b == nil {
		return nil
	}
	b.once.Do(func() {
		b.cancel()
		if b.sub != nil {
			b.sub.Close()
		}
		for _, s := range b.subs {
			_ = s.Unsubscribe()
		}
		b.wg.Wait()
		if b.nc.IsConnected() {
			_ = b.nc.FlushTimeout(time.Second)
		}
		b.nc.Close()
		b.log.Info("NATS bridge stopped", "stats", fmt.Sprintf("%+v", b.Stats()))
	})
	return nil
}

// Stats returns the counters.
func (b *Bridge) Stats() Stats {
	s := Stats{
		Published: b.published.Load(), PublishDropped: b.pubDropped.Load(), Skipped: b.skipped.Load(),
		Received: b.received.Load(), Fired: b.fired.Load(), FireErrors: b.fireErrors.Load(),
		Ignored: b.ignored.Load(), Reconnects: b.reconnects.Load(), Connected: b.nc.IsConnected(),
	}
	if b.sub != nil {
		s.QueueDropped = b.sub.Dropped()
	}
	return s
}

// Origin is the value of OriginHeader on this bridge's mirrors.
func (b *Bridge) Origin() string { return b.origin }

// JetStreamReady reports whether the durable consumer is consuming.
func (b *Bridge) JetStreamReady() bool { return b.jsReady.Load() }

func anyMatch(ms []event.Matcher, tag string) bool {
	for _, m := range ms {
		if m.Match(tag) {
			return true
		}
	}
	return false
}

// mirror publishes the bus's events to NATS until the subscription ends.
func (b *Bridge) mirror() {
	defer b.wg.Done()
	for ev := range b.sub.C() {
		if !anyMatch(b.include, ev.Tag) || anyMatch(b.exclude, ev.Tag) {
			b.skipped.Add(1)
			continue
		}
		subj, err := TagSubject(b.cfg.Prefix, ev.Tag, b.cfg.EscapeTags)
		if err != nil {
			if n := b.skipped.Add(1); n%dropLogEvery == 1 {
				b.log.Debug("event not mirrored", "tag", ev.Tag, "err", err)
			}
			continue
		}
		if subj == b.fireNS || strings.HasPrefix(subj, b.fireNS+".") {
			b.skipped.Add(1)
			continue
		}
		var data []byte
		if b.cfg.Encoding == EncodingMsgpack {
			data, err = payload.MarshalBin(ev.Data)
		} else {
			data, err = ev.Data.MarshalJSON()
		}
		if err != nil {
			b.skipped.Add(1)
			b.log.Warn("event not mirrored: cannot encode its data", "tag", ev.Tag, "err", err)
			continue
		}
		msg := &natsgo.Msg{Subject: subj, Data: data,
			Header: natsgo.Header{TagHeader: []string{ev.Tag}, OriginHeader: []string{b.origin}}}
		err = b.nc.PublishMsg(msg)
		if errors.Is(err, natsgo.ErrHeadersNotSupported) {
			// Not connected yet (the server's INFO is unknown): mirror
			// without headers rather than lose the event.
			msg.Header = nil
			err = b.nc.PublishMsg(msg)
		}
		if err != nil {
			if n := b.pubDropped.Add(1); n%dropLogEvery == 1 {
				b.log.Warn("NATS refused mirrored events; dropping", "dropped", n, "tag", ev.Tag, "err", err)
			}
			continue
		}
		b.published.Add(1)
	}
}

// subscribeCore subscribes to every inbound subject.
func (b *Bridge) subscribeCore() error {
	for i := range b.cfg.Subscribe {
		m := &b.cfg.Subscribe[i]
		cb := func(msg *natsgo.Msg) {
			b.received.Add(1)
			_ = b.handle(msg.Subject, msg.Header, msg.Data, m)
		}
		var s *natsgo.Subscription
		var err error
		if m.Queue != "" {
			s, err = b.nc.QueueSubscribe(m.Subject, m.Queue, cb)
		} else {
			s, err = b.nc.Subscribe(m.Subject, cb)
		}
		if err != nil {
			return fmt.Errorf("nats: subscribe %s: %w", m.Subject, err)
		}
		if err := s.SetPendingLimits(b.cfg.QueueSize, maxPendingBytes); err != nil {
			return fmt.Errorf("nats: subscribe %s: %w", m.Subject, err)
		}
		b.subs = append(b.subs, s)
	}
	return nil
}

// errNoRetry marks an inbound message that can never be fired (JetStream
// terminates it instead of redelivering it).
var errNoRetry = errors.New("nats: message cannot be fired")

// handle fires one inbound message through mapping m.
func (b *Bridge) handle(subject string, hdr natsgo.Header, body []byte, m *Mapping) error {
	if hdr != nil && hdr.Get(OriginHeader) == b.origin {
		b.ignored.Add(1)
		return nil
	}
	tag, ok := m.TagFor(subject)
	if !ok {
		b.ignored.Add(1)
		return nil
	}
	if m.fire && hdr != nil {
		if t := hdr.Get(TagHeader); t != "" {
			tag = t
		}
	}
	if !anyMatch(b.fireInclude, tag) || anyMatch(b.fireExclude, tag) {
		b.ignored.Add(1)
		b.log.Debug("NATS message not fired: fire_include/fire_exclude", "subject", subject, "tag", tag)
		return nil
	}
	data := decodeBody(body, b.cfg.Encoding)
	if !data.Has(SubjectKey) {
		data.Set(SubjectKey, subject)
	}
	if err := b.bus.Fire(event.Event{Tag: tag, Data: data}); err != nil {
		b.fireErrors.Add(1)
		b.log.Warn("NATS message not fired", "subject", subject, "tag", tag, "err", err)
		if errors.Is(err, event.ErrClosed) {
			return err
		}
		return fmt.Errorf("%w: %w", errNoRetry, err)
	}
	b.fired.Add(1)
	return nil
}

// decodeBody turns a message body into event data: a JSON object as is
// (key order kept), a msgpack map when the encoding is msgpack, anything
// else under PayloadKey (string when UTF-8, else bytes; nothing when
// empty).
func decodeBody(body []byte, encoding string) *payload.Map {
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		if v, err := render.DecodeJSON(t); err == nil {
			if m, ok := v.(*payload.Map); ok {
				return m
			}
		}
	}
	if encoding == EncodingMsgpack && len(body) > 0 {
		if m, err := payload.UnmarshalMap(body); err == nil && m != nil {
			return m
		}
	}
	m := payload.NewMap()
	if len(body) > 0 {
		if utf8.Valid(body) {
			m.Set(PayloadKey, string(body))
		} else {
			m.Set(PayloadKey, bytes.Clone(body))
		}
	}
	return m
}

// runJetStream makes sure the stream exists, waits start_delay, then
// creates the durable consumer and consumes until the bridge stops; each
// step is retried with backoff while NATS is unreachable.
func (b *Bridge) runJetStream() {
	defer b.wg.Done()
	js, err := jetstream.New(b.nc)
	if err != nil {
		b.log.Error("JetStream", "err", err)
		return
	}
	if !b.retry("JetStream stream not ready", func() error { return b.ensureStream(js) }) {
		return
	}
	if d := b.cfg.JetStream.StartDelay; d > 0 {
		b.log.Info("JetStream consumer starts later", "start_delay", d)
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(d):
		}
	}
	var cc jetstream.ConsumeContext
	if !b.retry("JetStream consumer not ready", func() (err error) { cc, err = b.consume(js); return err }) {
		return
	}
	b.jsReady.Store(true)
	<-b.ctx.Done()
	cc.Stop()
	b.jsReady.Store(false)
}

// retry calls f until it succeeds (true) or the bridge stops (false),
// waiting with backoff in between and logging now and then.
func (b *Bridge) retry(what string, f func() error) bool {
	wait := backoff(b.cfg.ReconnectWait, b.cfg.ReconnectMax)
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil {
			return true
		}
		if b.ctx.Err() != nil {
			return false
		}
		if attempt == 1 || attempt%10 == 0 {
			b.log.Warn(what+"; retrying", "stream", b.cfg.JetStream.Stream, "attempt", attempt, "err", err)
		}
		select {
		case <-b.ctx.Done():
			return false
		case <-time.After(wait(attempt)):
		}
	}
}

// ensureStream creates the stream when it is missing and create is set.
// An existing stream is left as it is.
func (b *Bridge) ensureStream(js jetstream.JetStream) error {
	jc := b.cfg.JetStream
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.ConnectTimeout)
	defer cancel()
	st, err := js.Stream(ctx, jc.Stream)
	if err == nil {
		return b.extendStream(ctx, js, st)
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) || !jc.Create {
		return fmt.Errorf("stream %s: %w", jc.Stream, err)
	}
	sc := jetstream.StreamConfig{Name: jc.Stream, Subjects: jc.Subjects, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxAge: jc.MaxAge, MaxMsgs: jc.MaxMsgs}
	if len(sc.Subjects) == 0 {
		sc.Subjects = b.cfg.inboundSubjects()
	}
	if _, err := js.CreateStream(ctx, sc); err != nil {
		return fmt.Errorf("create stream %s: %w", jc.Stream, err)
	}
	b.log.Info("JetStream stream created", "stream", jc.Stream, "subjects", strings.Join(sc.Subjects, " "))
	return nil
}

// extendStream adds the inbound subjects an existing stream does not
// cover (a mapping added since it was created) when create is set, and
// logs them otherwise: messages on them would never reach the consumer.
func (b *Bridge) extendStream(ctx context.Context, js jetstream.JetStream, st jetstream.Stream) error {
	sc := st.CachedInfo().Config
	var missing []string
	for _, want := range b.cfg.inboundSubjects() {
		if !slices.ContainsFunc(sc.Subjects, func(have string) bool { return covers(have, want) }) {
			missing = append(missing, want)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !b.cfg.JetStream.Create {
		b.log.Warn("the JetStream stream does not hold these inbound subjects: their messages are not fired",
			"stream", sc.Name, "subjects", strings.Join(missing, " "))
		return nil
	}
	sc.Subjects = append(sc.Subjects, missing...)
	if _, err := js.UpdateStream(ctx, sc); err != nil {
		return fmt.Errorf("add subjects %s to stream %s: %w", strings.Join(missing, " "), sc.Name, err)
	}
	b.log.Info("JetStream stream subjects added", "stream", sc.Name, "subjects", strings.Join(missing, " "))
	return nil
}

// covers reports whether every subject matching pattern b matches
// pattern a.
func covers(a, b string) bool {
	at, bt := strings.Split(a, "."), strings.Split(b, ".")
	for i, t := range at {
		switch {
		case t == ">":
			return i < len(bt)
		case i >= len(bt):
			return false
		case t == "*" && bt[i] != ">":
		case t != bt[i]:
			return false
		}
	}
	return len(at) == len(bt)
}

// consume creates or updates the durable pull consumer and starts
// consuming.
func (b *Bridge) consume(js jetstream.JetStream) (jetstream.ConsumeContext, error) {
	jc := b.cfg.JetStream
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.ConnectTimeout)
	defer cancel()
	subjects := b.cfg.inboundSubjects()
	cc := jetstream.ConsumerConfig{Durable: jc.Durable, AckPolicy: jetstream.AckExplicitPolicy, AckWait: jc.AckWait,
		MaxDeliver: jc.MaxDeliver, MaxAckPending: b.cfg.QueueSize, DeliverPolicy: jetstream.DeliverAllPolicy}
	if len(subjects) == 1 {
		cc.FilterSubject = subjects[0]
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, jc.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", jc.Durable, err)
	}
	batch := min(b.cfg.QueueSize, 256)
	return cons.Consume(b.handleJS, jetstream.PullMaxMessages(batch),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			b.log.Debug("JetStream consume", "err", err)
		}))
}

// handleJS fires a stream message through every mapping whose subject
// matches and acknowledges it once fired (a closed bus: not acknowledged,
// so it is redelivered; a message that can never be fired is terminated).
func (b *Bridge) handleJS(msg jetstream.Msg) {
	subject := msg.Subject()
	b.received.Add(1)
	matched := false
	var err error
	for i := range b.cfg.Subscribe {
		m := &b.cfg.Subscribe[i]
		if _, ok := m.match(subject); !ok {
			continue
		}
		matched = true
		err = errors.Join(err, b.handle(subject, msg.Headers(), msg.Data(), m))
	}
	if !matched {
		b.ignored.Add(1)
	}
	switch {
	case err == nil:
		_ = msg.Ack()
	case errors.Is(err, errNoRetry):
		_ = msg.Term()
	default:
		_ = msg.Nak()
	}
}
