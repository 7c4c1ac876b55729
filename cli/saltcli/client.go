package saltcli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/output"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// Error kinds of the client; a *SaltError carries one of them and the text
// Salt prints for it.
var (
	// ErrAuthentication: the master refused the key (or eauth).
	ErrAuthentication = errors.New("saltcli: authentication error")
	// ErrAuthorization: the master refused the function or target.
	ErrAuthorization = errors.New("saltcli: authorization error")
	// ErrPublish: the master answered with another error.
	ErrPublish = errors.New("saltcli: publish error")
	// ErrNoMaster: the master's request port or event bus is unreachable.
	ErrNoMaster = errors.New("saltcli: master unreachable")
	// ErrMasterTimeout: the master did not answer a request in time.
	ErrMasterTimeout = errors.New("saltcli: master request timed out")
	// ErrBadReply: the master's reply has an unexpected shape.
	ErrBadReply = errors.New("saltcli: unexpected reply from the master")
)

// SaltError is a client failure with the message Salt shows for it.
type SaltError struct {
	Kind error
	Text string
}

func (e *SaltError) Error() string { return e.Text }

// Unwrap returns the error kind.
func (e *SaltError) Unwrap() error { return e.Kind }

// Texts Salt prints for client failures (salt/client/__init__.py).
const (
	TextNoMaster     = "The salt master could not be contacted. Is master running?"
	TextReqTimeout   = "Salt request timed out. The master is not responding. You may need to run your command with `--async` in order to bypass the congested event bus. With `--async`, the CLI tool will print the job id (jid) and exit immediately without listening for responses. You can then use `gsalt-run jobs.lookup_jid` to look up the results of the job in the job cache later."
	TextNoMinions    = "No minions matched the target. No command was sent, no jid was assigned."
	TextNoConnect    = "Failed to connect to the Master, is the Salt Master running?"
	TextFailedAuth   = "Failed to authenticate! This is most likely because this user is not permitted to execute commands, but there is a small possibility that a disk error occurred (check disk/inode usage)."
	TextAuthorizeErr = "Authorization error occurred."
)

// Client is gsalt's LocalClient: it sends clear requests (publish, runner)
// with the master's root key and reads the master event bus.
type Client struct {
	// Master is the loaded master configuration.
	Master *config.Master
	// Key is the content of cachedir/.<user>_key ("" when unreadable).
	Key string
	// User is what the load's "user" says (root, sudo_<user>, a name).
	User string
	// Addr is the request server, host:port.
	Addr string
	// Local, when set ("ipc://PATH"), is the master's local request
	// socket (transport.LocalReqSocket), used instead of Addr.
	Local string
	// Logger receives debug logs.
	Logger *slog.Logger
}

// SaltUser is salt.utils.user.get_specific_user: the effective user's
// name, or sudo_<SUDO_USER> for root under sudo.
func SaltUser() string {
	name := strconv.Itoa(os.Geteuid())
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	if name == "root" {
		if su, ok := os.LookupEnv("SUDO_USER"); ok {
			return "sudo_" + su
		}
	}
	return name
}

// keyUser is the user whose key file LocalClient reads.
func keyUser(saltUser, cfgUser string) string {
	if cfgUser == "" {
		cfgUser = "root"
	}
	if saltUser == "root" && cfgUser != "root" {
		return cfgUser
	}
	if strings.HasPrefix(saltUser, "sudo_") {
		return cfgUser
	}
	return saltUser
}

// ReadKey returns the content of cachedir/.<user>_key, or "" when it
// cannot be read (the master then refuses the request).
func ReadKey(cachedir, saltUser, cfgUser string) string {
	b, err := os.ReadFile(filepath.Join(cachedir, "."+keyUser(saltUser, cfgUser)+"_key"))
	if err != nil {
		return ""
	}
	return string(b)
}

// NewClient prepares a client for the master described by cfg.
func NewClient(cfg *config.Master, log *slog.Logger) *Client {
	if log == nil {
		log = slog.Default()
	}
	u := SaltUser()
	host := cfg.Interface
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	c := &Client{
		Master: cfg,
		Key:    ReadKey(cfg.CacheDir, u, cfg.User),
		User:   u,
		Addr:   net.JoinHostPort(host, strconv.Itoa(cfg.RetPort)),
		Logger: log,
	}
	if local := localReqSocket(cfg.SockDir); local != "" {
		c.Local = "ipc://" + local
	}
	return c
}

// localReqSocket returns sock_dir's gsalt_req.ipc when a gsalt-master on
// this host serves its request port there and this user may connect to
// it (the same requests as the TCP port, which stays the way for Salt's
// masters and for users without access), else "".
func localReqSocket(sockDir string) string {
	if sockDir == "" {
		return ""
	}
	path := filepath.Join(sockDir, transport.LocalReqSocket)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || syscall.Access(path, 2 /* W_OK */) != nil {
		return ""
	}
	return path
}

// Request sends a clear load ({enc: clear, load, version: 2}) and returns
// the decoded reply. timeout bounds each of the tries.
func (c *Client) Request(ctx context.Context, load *payload.Map, timeout time.Duration) (any, error) {
	frame, err := message.EncodeClearRequest(load)
	if err != nil {
		return nil, fmt.Errorf("saltcli: encoding the request: %w", err)
	}
	addr := c.Addr
	if c.Local != "" {
		addr = c.Local
	}
	rc := &transport.ReqClient{Addr: addr, Tries: 1, Timeout: timeout, Logger: c.Logger}
	reply, err := rc.Send(ctx, frame)
	if err != nil {
		if errors.Is(err, transport.ErrTimeout) {
			return nil, &SaltError{Kind: ErrMasterTimeout, Text: TextReqTimeout}
		}
		return nil, &SaltError{Kind: ErrNoMaster, Text: TextNoMaster}
	}
	v, err := payload.Unmarshal(reply)
	if err != nil {
		return nil, &SaltError{Kind: ErrBadReply, Text: fmt.Sprintf("%v", err)}
	}
	return v, nil
}

// PubArgs are LocalClient.pub's arguments.
type PubArgs struct {
	Tgt     any
	Fun     any
	Arg     []any
	TgtType string
	Ret     string
	JID     string
	Timeout int
	// Kwargs are the client options sent as "kwargs" (only when
	// non-empty), in Salt's order.
	Kwargs *payload.Map
}

// PubData is what a successful publish returns.
type PubData struct {
	JID     string
	Minions []string
}

// PublishLoad builds the clear publish load in the key order the salt CLI
// sends (capture testping.jsonl #5).
func (c *Client) PublishLoad(p PubArgs) *payload.Map {
	arg := p.Arg
	if arg == nil {
		arg = []any{}
	}
	load := payload.NewMap(
		"cmd", "publish",
		"tgt", p.Tgt,
		"fun", p.Fun,
		"arg", arg,
		"key", c.Key,
		"tgt_type", p.TgtType,
		"ret", p.Ret,
		"timeout", int64(p.Timeout),
		"jid", p.JID,
	)
	if p.Kwargs != nil && p.Kwargs.Len() > 0 {
		load.Set("kwargs", p.Kwargs)
	}
	load.Set("user", c.User)
	return load
}

// Publish sends a job like LocalClient.run_job: the reply is checked as
// _check_pub_data does, printing Salt's notices to notice. A nil PubData
// with a nil error is Salt's empty pub_data (nothing was published).
func (c *Client) Publish(ctx context.Context, p PubArgs, notice io.Writer) (*PubData, error) {
	load := c.PublishLoad(p)
	timeout := time.Duration(p.Timeout) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	reply, err := c.Request(ctx, load, timeout)
	if err != nil {
		return nil, err
	}
	if !payload.Truthy(reply) {
		// The master key may have been rotated under us: read it again
		// and retry once, as LocalClient.pub does.
		key := ReadKey(c.Master.CacheDir, c.User, c.Master.User)
		if key != c.Key {
			c.Key = key
			load.Set("key", key)
			if reply, err = c.Request(ctx, load, timeout); err != nil {
				return nil, err
			}
		}
	}
	if s, ok := reply.(string); ok && s == "" {
		return nil, &SaltError{Kind: ErrAuthentication, Text: TextFailedAuth}
	}
	m, ok := reply.(*payload.Map)
	if !ok {
		if !payload.Truthy(reply) {
			return nil, nil
		}
		return nil, &SaltError{Kind: ErrBadReply, Text: fmt.Sprintf("'%s' object has no attribute 'pop'", pyTypeShort(reply))}
	}
	m = m.Clone()
	if e, has := m.Delete("error"); has && e != nil {
		if em, isMap := e.(*payload.Map); isMap {
			switch em.Str("name") {
			case "AuthenticationError":
				return nil, &SaltError{Kind: ErrAuthentication, Text: em.Str("message")}
			case "AuthorizationError":
				return nil, &SaltError{Kind: ErrAuthorization, Text: em.Str("message")}
			}
		}
		return nil, &SaltError{Kind: ErrPublish, Text: output.PyStr(e)}
	}
	if m.Len() == 0 {
		return nil, nil
	}
	l := m.Map("load")
	if l == nil {
		return nil, &SaltError{Kind: ErrBadReply, Text: "'load'"}
	}
	jid, _ := l.Get("jid")
	minions := stringList(l.List("minions"))
	if js, ok := jid.(string); ok && js == "0" {
		fmt.Fprintln(notice, TextNoConnect)
		return nil, nil
	}
	if len(minions) == 0 {
		fmt.Fprintln(notice, TextNoMinions)
		return nil, nil
	}
	js, _ := jid.(string)
	return &PubData{JID: js, Minions: minions}, nil
}

func pyTypeShort(v any) string {
	switch v.(type) {
	case string:
		return "str"
	case []any:
		return "list"
	case bool:
		return "bool"
	case int64, uint64:
		return "int"
	case float64:
		return "float"
	case []byte:
		return "bytes"
	}
	return "object"
}

func stringList(l []any) []string {
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, payload.Text(e))
	}
	return out
}

// Events is a subscription to the master event bus: a reader goroutine
// delivers the matching events in order on C.
type Events struct {
	r      *event.IPCReader
	ch     chan event.Event
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
}

// SubscribeSettle is the pause after connecting to the event bus before
// the job is published.
const SubscribeSettle = 20 * time.Millisecond

// ProbeTagPrefix starts the tag of the event a CLI fires to confirm its
// subscription to the master event bus.
const ProbeTagPrefix = "gsalt/cli/subscribed/"

// probeTimeout bounds the wait for the probe event.
const probeTimeout = 10 * time.Second

// Probe resend delays: the first resend comes probeFirstRetry after the
// first probe, each later one after twice the previous delay, at most
// probeMaxRetry apart. The bus registers our reader on one goroutine and
// reads the probe from the pull socket on another; when the probe wins
// that race it reaches no reader and is lost (about one CLI start in four
// on a loaded 2-core machine). A fixed 200 ms resend made those starts
// 200 ms slower; a resend costs one small event on the bus.
const (
	probeFirstRetry = 2 * time.Millisecond
	probeMaxRetry   = 200 * time.Millisecond
)

// probeDelay is the wait after the probe sent as number n (0: the first)
// before it is sent again.
func probeDelay(n int) time.Duration {
	d := probeFirstRetry
	for ; n > 0 && d < probeMaxRetry; n-- {
		d *= 2
	}
	return min(d, probeMaxRetry)
}

// awaitProbe fires a probe event on master_event_pull.ipc, again after
// each probeDelay, until r reads it back. Events read before it are not
// ours: the caller publishes only after Subscribe returns. The probes go
// through one pull connection (dialled again only when it breaks).
func (c *Client) awaitProbe(ctx context.Context, r *event.IPCReader) error {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	tag := ProbeTagPrefix + hex.EncodeToString(nonce[:])
	pull := filepath.Join(c.Master.SockDir, event.MasterPullSocket)
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	seen := make(chan error, 1)
	go func() {
		for {
			ev, err := r.Next(pctx)
			if err != nil {
				if errors.Is(err, event.ErrBadFrame) {
					continue
				}
				seen <- err
				return
			}
			if ev.Tag == tag {
				seen <- nil
				return
			}
		}
	}()
	var push *event.Pusher
	defer func() {
		if push != nil {
			_ = push.Close()
		}
	}()
	probe := event.Event{Tag: tag, Data: payload.NewMap("probe", true)}
	fire := func() error {
		if push != nil {
			if err := push.Fire(pctx, probe); err == nil {
				return nil
			}
			_ = push.Close()
			push = nil
		}
		p, err := event.DialPush(pctx, pull)
		if err != nil {
			return err
		}
		push = p
		return p.Fire(pctx, probe)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for n := 0; ; n++ {
		if err := fire(); err != nil {
			cancel()
			<-seen
			return fmt.Errorf("probe: %w", err)
		}
		timer.Reset(probeDelay(n))
		select {
		case err := <-seen:
			return err
		case <-timer.C:
		}
	}
}

// maxBadFrames ends a subscription after this many undecodable frames in
// a row (the stream is then broken).
const maxBadFrames = 16

// Subscribe connects to sock_dir/master_event_pub.ipc and delivers every
// event whose tag satisfies match (nil: all). It must be called before
// publishing so no return is missed.
func (c *Client) Subscribe(ctx context.Context, match func(tag string) bool, queue int) (*Events, error) {
	path := filepath.Join(c.Master.SockDir, event.MasterPubSocket)
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	r, err := event.DialPub(dctx, path)
	dcancel()
	if err != nil {
		c.Logger.Debug("cannot connect to the master event bus", "path", path, "error", err)
		return nil, &SaltError{Kind: ErrNoMaster, Text: TextNoMaster}
	}
	if queue <= 0 {
		queue = 4096
	}
	// The bus registers a reader after accepting its connection, which
	// may lag behind our connect (a master that just started, a loaded
	// machine); Salt's IPC has no handshake. Fire a probe event through
	// the pull socket until it comes back on our reader: from then on
	// every event reaches us. Without a pull socket, pause briefly.
	if err := c.awaitProbe(ctx, r); err != nil {
		if ctx.Err() != nil {
			_ = r.Close()
			return nil, ctx.Err()
		}
		c.Logger.Debug("event bus subscription not confirmed; pausing instead", "error", err)
		select {
		case <-time.After(SubscribeSettle):
		case <-ctx.Done():
			_ = r.Close()
			return nil, ctx.Err()
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	e := &Events{r: r, ch: make(chan event.Event, queue), cancel: cancel}
	e.wg.Add(1)
	go e.loop(rctx, match, c.Logger)
	return e, nil
}

func (e *Events) loop(ctx context.Context, match func(string) bool, log *slog.Logger) {
	defer e.wg.Done()
	defer close(e.ch)
	bad := 0
	for {
		ev, err := e.r.Next(ctx)
		if err != nil {
			if errors.Is(err, event.ErrBadFrame) && bad < maxBadFrames {
				bad++
				log.Debug("skipping a bad event frame", "error", err)
				continue
			}
			e.mu.Lock()
			e.err = err
			e.mu.Unlock()
			return
		}
		bad = 0
		if match != nil && !match(ev.Tag) {
			continue
		}
		select {
		case e.ch <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// C delivers the events; it is closed when the connection ends.
func (e *Events) C() <-chan event.Event { return e.ch }

// Err is the error that ended the subscription, if any.
func (e *Events) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Close ends the subscription and waits for the reader.
func (e *Events) Close() error {
	e.cancel()
	err := e.r.Close()
	e.wg.Wait()
	return err
}
