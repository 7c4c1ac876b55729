package driver

// The NETCONF connection layer of the junos driver: scrapligo's netconf
// driver (NETCONF over SSH, RFC 6242 framing 1.0 or 1.1 as the server's
// hello allows), the per-operation time budget shared with the SSH
// drivers (session) and the classification of rpc-error replies.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scrapli/scrapligo/driver/netconf"
	"github.com/scrapli/scrapligo/driver/opoptions"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/transport"
	"github.com/scrapli/scrapligo/util"
)

const (
	// DefaultNetconfPort is the NETCONF over SSH port (RFC 6242).
	DefaultNetconfPort = 830
	// defaultHelloDelay is the pause between the hello exchange and the
	// first RPC. yuma123's netconfd drops an RPC that arrives in the same
	// read as the client's hello (scrapligo writes both back to back), so
	// the first RPC would wait for its reply until the timeout (14 times
	// out of 20; a 10 ms pause was enough in 60 tries).
	defaultHelloDelay = 100 * time.Millisecond
	// ncCloseWait bounds the wait for scrapligo's reader goroutine when a
	// connection is closed.
	ncCloseWait = time.Second
)

// NETCONF capabilities the driver looks for.
const (
	capCandidate       = "urn:ietf:params:netconf:capability:candidate:1.0"
	capConfirmed10     = "urn:ietf:params:netconf:capability:confirmed-commit:1.0"
	capConfirmed11     = "urn:ietf:params:netconf:capability:confirmed-commit:1.1"
	capRollbackOnError = "urn:ietf:params:netconf:capability:rollback-on-error:1.0"
	capStartup         = "urn:ietf:params:netconf:capability:startup:1.0"
	capBase11          = "urn:ietf:params:netconf:base:1.1"
	// Junos announces its own XML API with capabilities under this URL.
	junosCapPrefix = "http://xml.juniper.net/"
)

// ncSession is one NETCONF connection: the shared session (options, the
// operation slot, the time budget, error helpers; its network driver is
// unused) and scrapligo's netconf driver.
type ncSession struct {
	*session
	nc         *netconf.Driver
	caps       []string
	helloDelay time.Duration
	ignoreWarn bool
	locked     bool // this session holds the candidate's lock
}

// newNCSession validates the options of a NETCONF driver: port defaults
// to 830 and the transport must be scrapligo's "standard" (crypto/ssh).
func newNCSession(name string, o Options) (*ncSession, error) {
	if o.Port == 0 && optInt(o.OptionalArgs, "port", 0) == 0 {
		o.Port = DefaultNetconfPort
	}
	s, err := newSession(name, "", o)
	if err != nil {
		return nil, err
	}
	if s.tport != transport.StandardTransport {
		return nil, fmt.Errorf("%w: %s: transport %q (NETCONF runs over the standard SSH transport only)", ErrInvalidArgument, name, s.tport)
	}
	n := &ncSession{session: s, helloDelay: defaultHelloDelay, ignoreWarn: optBool(o.OptionalArgs, "ignore_warning", false)}
	if v, ok := o.OptionalArgs["hello_delay"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v)), 64)
		if err != nil || f < 0 || f > 10 {
			return nil, fmt.Errorf("%w: %s: hello_delay %v (seconds, 0 to 10)", ErrInvalidArgument, name, v)
		}
		n.helloDelay = time.Duration(f * float64(time.Second))
	}
	return n, nil
}

// hasCap reports whether the server announced capability c (ignoring any
// "?parameters").
func (n *ncSession) hasCap(c string) bool {
	for _, x := range n.caps {
		if x == c || strings.HasPrefix(x, c+"?") {
			return true
		}
	}
	return false
}

// isJunos reports whether the server is Junos (its hello announces
// Juniper's XML API).
func (n *ncSession) isJunos() bool { return hasPrefixCap(n.caps, junosCapPrefix) }

// dropNC forgets the connection, closing it without waiting for the
// server. The slot must be held.
func (n *ncSession) dropNC() {
	if n.nc == nil {
		return
	}
	closeNetconf(n.nc)
	n.nc = nil
	n.locked = false
}

// closeNetconf closes a scrapligo netconf driver without hanging.
// Driver.Close first tells the reader goroutine to stop through an
// unbuffered channel; once the connection has failed, that goroutine sits
// blocked handing its read error to an RPC that nobody runs any more, so
// Close would block forever (see TestScrapligoNetconfCloseAfterPeerClose).
// Close therefore runs aside, and after ncCloseWait the channel is closed
// directly (the two stuck goroutines are then leaked: scrapligo offers no
// way to release them).
func closeNetconf(d *netconf.Driver) {
	done := make(chan struct{})
	go func() {
		_ = d.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(ncCloseWait):
		_ = d.Channel.Close()
	}
}

// open connects, exchanges hellos and records the server's capabilities.
func (n *ncSession) open(ctx context.Context) error {
	s := n.session
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	n.dropNC()
	dl := s.deadline(ctx)
	rem := time.Until(dl)
	if rem <= 0 {
		return s.errf(ErrTimeout, "open", ctx.Err())
	}
	d, err := netconf.NewDriver(s.o.Host,
		options.WithAuthNoStrictKey(),
		options.WithAuthUsername(s.o.Username),
		options.WithAuthPassword(s.o.Password),
		options.WithPort(s.o.Port),
		options.WithTransportType(transport.StandardTransport),
		options.WithTimeoutSocket(rem),
		options.WithTimeoutOps(rem),
	)
	if err != nil {
		return s.errf(ErrInvalidArgument, "open", err)
	}
	s.log.Debug("driver: opening NETCONF session", "driver", s.name, "addr", s.addr)
	// As in session.open: the SSH handshake is not bounded by scrapligo,
	// so the open is abandoned (and closed once it returns) when the time
	// is up.
	abandoned, err := openWithin(ctx, rem, d.Open, func() { closeNetconf(d) })
	if abandoned {
		return s.ctxErr("open", err)
	}
	if err != nil {
		return s.classifyOpen(err, dl)
	}
	if !d.ServerHasCapability(capCandidate) && !hasPrefixCap(d.ServerCapabilities(), junosCapPrefix) {
		closeNetconf(d)
		return s.errf(ErrNotSupported, "open", errors.New("the NETCONF server has no candidate datastore (:candidate capability)"))
	}
	if n.helloDelay > 0 {
		t := time.NewTimer(min(n.helloDelay, time.Until(dl)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			closeNetconf(d)
			return s.ctxErr("open", ctx.Err())
		}
	}
	n.nc = d
	n.caps = d.ServerCapabilities()
	n.locked = false
	s.openedAt = time.Now()
	s.log.Debug("driver: NETCONF session open", "driver", s.name, "addr", s.addr,
		"version", d.SelectedVersion, "session_id", d.SessionID(), "junos", n.isJunos())
	return nil
}

func hasPrefixCap(caps []string, prefix string) bool {
	for _, c := range caps {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// ncOp is one operation on a NETCONF session.
type ncOp struct {
	n        *ncSession
	ctx      context.Context
	deadline time.Time
	fatal    bool
}

// run executes fn as one operation; a context that ends closes the
// connection, and so does a failure that leaves it in an unknown state.
func (n *ncSession) run(ctx context.Context, fn func(o *ncOp) error) error {
	s := n.session
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := ctx.Err(); err != nil {
		return s.ctxErr("waiting for the connection", err)
	}
	if n.nc == nil {
		return s.notOpen()
	}
	o := &ncOp{n: n, ctx: ctx, deadline: s.deadline(ctx)}
	ch := n.nc.Channel
	stop := context.AfterFunc(ctx, func() { _ = ch.Close() })
	err := fn(o)
	if !stop() || o.fatal {
		n.dropNC()
		if err == nil && ctx.Err() != nil {
			err = s.ctxErr("operation", ctx.Err())
		}
	}
	return err
}

// rpcError is one <rpc-error> of a reply.
type rpcError struct {
	Type, Tag, Severity, AppTag, Path, Message, BadElement string
}

// RPCError is the error of an RPC the NETCONF server answered with
// rpc-error elements; it wraps ErrCommand or ErrNotSupported.
type RPCError struct {
	// RPC is the operation's name ("edit-config").
	RPC    string
	errors []rpcError
	kind   error
}

// Error implements error: the server's messages.
func (e *RPCError) Error() string {
	var parts []string
	for _, x := range e.errors {
		m := x.Message
		if m == "" {
			m = x.Tag
		}
		var extra []string
		if x.Tag != "" && x.Message != "" {
			extra = append(extra, x.Tag)
		}
		if x.BadElement != "" {
			extra = append(extra, "bad element "+x.BadElement)
		}
		if x.Path != "" {
			extra = append(extra, "path "+x.Path)
		}
		if len(extra) > 0 {
			m += " (" + strings.Join(extra, ", ") + ")"
		}
		parts = append(parts, m)
	}
	if len(parts) == 0 {
		return "rpc-error"
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns ErrCommand or ErrNotSupported.
func (e *RPCError) Unwrap() error { return e.kind }

// unsupportedRPC reports whether the errors say the server does not know
// the operation itself (rather than rejecting its content).
func unsupportedRPC(op string, errs []rpcError) bool {
	for _, x := range errs {
		switch x.Tag {
		case "operation-not-supported":
			return true
		case "unknown-element", "unknown-namespace":
			bad := x.BadElement
			if i := strings.LastIndexByte(bad, ':'); i >= 0 {
				bad = bad[i+1:]
			}
			if bad == op || strings.HasSuffix(strings.TrimRight(x.Path, "/"), "rpc/"+op) ||
				strings.HasSuffix(x.Path, ":"+op) {
				return true
			}
		}
	}
	return false
}

// parseRPCErrors reads the rpc-error elements of a reply.
func parseRPCErrors(reply *xnode) []rpcError {
	var out []rpcError
	for _, e := range reply.findAll("rpc-error") {
		out = append(out, rpcError{
			Type: e.value("error-type"), Tag: e.value("error-tag"), Severity: e.value("error-severity"),
			AppTag: e.value("error-app-tag"), Path: e.value("error-path"),
			Message:    strings.TrimSpace(e.value("error-message")),
			BadElement: e.child("error-info").value("bad-element"),
		})
	}
	return out
}

// rpcName returns the local name of an RPC payload's first element.
func rpcName(payload string) string {
	s := strings.TrimLeft(payload, " \t\r\n<")
	if i := strings.IndexAny(s, " \t\r\n/>"); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// rpc sends one RPC (payload: the operation element) and returns the
// parsed reply. A reply with rpc-error elements of severity error (or
// warning, unless the ignore_warning optional argument is true) fails
// with an *RPCError; a reply that cannot be read fails with ErrConnect
// and closes the connection.
func (o *ncOp) rpc(payload string) (*xnode, error) {
	s := o.n.session
	what := rpcName(payload)
	rem := time.Until(o.deadline)
	if rem <= 0 {
		o.fatal = true
		if err := o.ctx.Err(); err != nil {
			return nil, s.ctxErr(what, err)
		}
		return nil, s.errf(ErrTimeout, what, nil)
	}
	s.log.Debug("driver: rpc", "driver", s.name, "addr", s.addr, "rpc", what)
	r, err := o.n.nc.RPC(opoptions.WithFilter(payload), opoptions.WithTimeoutOps(rem))
	if err != nil {
		o.fatal = true
		if cerr := o.ctx.Err(); cerr != nil {
			return nil, s.ctxErr(what, cerr)
		}
		if errors.Is(err, util.ErrTimeoutError) || !time.Now().Before(o.deadline) {
			return nil, s.errf(ErrTimeout, what, err)
		}
		return nil, s.errf(ErrConnect, what+": connection lost", err)
	}
	if len(r.Result) > maxOutput {
		return nil, s.errf(ErrCommand, what, fmt.Errorf("reply larger than %d bytes", maxOutput))
	}
	reply, perr := parseXML(r.Result)
	if perr != nil {
		if r.Failed != nil {
			// scrapligo could not unframe the reply (NETCONF 1.1 chunks):
			// the stream is out of step.
			o.fatal = true
			return nil, s.errf(ErrConnect, what+": bad reply", r.Failed)
		}
		return nil, s.errf(ErrCommand, what, fmt.Errorf("bad reply: %w", perr))
	}
	if errs := parseRPCErrors(reply); len(errs) > 0 {
		var real []rpcError
		for _, e := range errs {
			if e.Severity != "warning" || !o.n.ignoreWarn {
				real = append(real, e)
			}
		}
		if len(real) > 0 {
			kind := ErrCommand
			if unsupportedRPC(what, real) {
				kind = ErrNotSupported
			}
			return nil, s.errf(kind, what, &RPCError{RPC: what, errors: real, kind: kind})
		}
	}
	return reply, nil
}

// isUnsupported reports whether err is an RPC the server does not know.
func isUnsupported(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && errors.Is(re.kind, ErrNotSupported)
}

// getConfig returns the canonical rendering of a datastore's content
// (optionally restricted by a subtree filter).
func (o *ncOp) getConfig(source, filter string) (string, error) {
	p := "<get-config><source><" + source + "/></source>"
	if filter != "" {
		p += "<filter type=\"subtree\">" + filter + "</filter>"
	}
	reply, err := o.rpc(p + "</get-config>")
	if err != nil {
		return "", err
	}
	return renderXML(replyData(reply)...), nil
}

// get returns the <data> of a <get> with a subtree filter.
func (o *ncOp) get(filter string) ([]*xnode, error) {
	reply, err := o.rpc("<get><filter type=\"subtree\">" + filter + "</filter></get>")
	if err != nil {
		return nil, err
	}
	return replyData(reply), nil
}

// lockCandidate takes the candidate's lock unless this session holds it.
func (o *ncOp) lockCandidate() error {
	if o.n.locked {
		return nil
	}
	if _, err := o.rpc("<lock><target><candidate/></target></lock>"); err != nil {
		return err
	}
	o.n.locked = true
	return nil
}

// unlockCandidate releases the candidate's lock if this session holds it.
func (o *ncOp) unlockCandidate() error {
	if !o.n.locked {
		return nil
	}
	o.n.locked = false
	_, err := o.rpc("<unlock><target><candidate/></target></unlock>")
	return err
}

// closeNC releases the candidate's lock (politely, within closeGrace) and
// closes the connection; it is safe to call more than once.
func (n *ncSession) closeNC(ctx context.Context) error {
	s := n.session
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if n.nc == nil {
		return nil
	}
	var err error
	if n.locked && ctx.Err() == nil {
		o := &ncOp{n: n, ctx: ctx, deadline: time.Now().Add(min(closeGrace, time.Until(s.deadline(ctx))))}
		err = o.unlockCandidate()
	}
	n.dropNC()
	if errors.Is(err, ErrConnect) || errors.Is(err, ErrTimeout) {
		err = nil // the connection is gone anyway
	}
	return err
}
