package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scrapli/scrapligo/channel"
	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/opoptions"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"
	"github.com/scrapli/scrapligo/util"
)

// session is the connection layer shared by the platform drivers: one
// scrapligo network driver (transport + channel + privilege levels), the
// per-operation time budget and the classification of scrapligo's errors.
type session struct {
	name     string // gsalt driver name: "ios", "eos"
	scrapli  string // scrapligo platform: "cisco_iosxe", "arista_eos"
	o        Options
	addr     string
	secret   string
	tport    string
	log      *slog.Logger
	sem      chan struct{} // one slot: operations run one at a time
	d        *network.Driver
	openedAt time.Time // when the connection was opened
	canned   runner    // tests: getters answer from canned outputs
}

// closeGrace bounds the polite logout of Close.
const closeGrace = 5 * time.Second

func newSession(name, scrapliPlatform string, o Options) (*session, error) {
	if strings.TrimSpace(o.Host) == "" {
		return nil, fmt.Errorf("%w: %s: empty host", ErrInvalidArgument, name)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	s := &session{name: name, scrapli: scrapliPlatform, o: o, log: o.Logger, sem: make(chan struct{}, 1)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.tport = strings.ToLower(o.Transport)
	if s.tport == "" {
		s.tport = strings.ToLower(optString(o.OptionalArgs, "transport", ""))
	}
	switch s.tport {
	case "", "ssh", transport.StandardTransport:
		s.tport = transport.StandardTransport
	case transport.SystemTransport, transport.TelnetTransport:
	default:
		return nil, fmt.Errorf("%w: %s: transport %q (want ssh, standard, system or telnet)", ErrInvalidArgument, name, o.Transport)
	}
	if s.o.Port == 0 {
		s.o.Port = optInt(o.OptionalArgs, "port", 0)
	}
	if s.o.Port == 0 {
		s.o.Port = DefaultPort
		if s.tport == transport.TelnetTransport {
			s.o.Port = 23
		}
	}
	if s.o.Port < 1 || s.o.Port > 65535 {
		return nil, fmt.Errorf("%w: %s: port %d", ErrInvalidArgument, name, s.o.Port)
	}
	s.secret = o.Secret
	if s.secret == "" {
		s.secret = optString(o.OptionalArgs, "secret", "")
	}
	s.addr = net.JoinHostPort(o.Host, strconv.Itoa(s.o.Port))
	return s, nil
}

// leanTransport returns the options that put a fresh leanSSH in place of
// scrapligo's standard transport (SSH sessions only).
func (s *session) leanTransport() []util.Option {
	if s.tport != transport.StandardTransport {
		return nil
	}
	return []util.Option{options.WithCustomTransport(&leanSSH{})}
}

// lock takes the operation slot, giving up when ctx ends.
func (s *session) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return s.ctxErr("waiting for the connection", ctx.Err())
	}
}

func (s *session) unlock() { <-s.sem }

// deadline is the end of an operation starting now.
func (s *session) deadline(ctx context.Context) time.Time {
	dl := time.Now().Add(s.o.Timeout)
	if c, ok := ctx.Deadline(); ok && c.Before(dl) {
		dl = c
	}
	return dl
}

// errf builds "sentinel: ios host:port: what: cause".
func (s *session) errf(sentinel error, what string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w: %s %s: %s", sentinel, s.name, s.addr, what)
	}
	return fmt.Errorf("%w: %s %s: %s: %w", sentinel, s.name, s.addr, what, cause)
}

func (s *session) ctxErr(what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return s.errf(ErrTimeout, what, err)
	}
	return fmt.Errorf("driver: %s %s: %s: %w", s.name, s.addr, what, err)
}

func (s *session) notOpen() error {
	return fmt.Errorf("%w: %w: %s %s", ErrConnect, ErrNotOpen, s.name, s.addr)
}

// drop forgets the connection after closing its channel without a logout
// (used when the connection's state is unknown). The slot must be held.
func (s *session) drop() {
	if s.d == nil {
		return
	}
	_ = s.d.Channel.Close()
	s.d = nil
}

// open connects and logs in; see Driver.Open.
func (s *session) open(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	s.drop()
	dl := s.deadline(ctx)
	rem := time.Until(dl)
	if rem <= 0 {
		return s.errf(ErrTimeout, "open", ctx.Err())
	}
	opts := []util.Option{
		options.WithAuthNoStrictKey(),
		options.WithAuthUsername(s.o.Username),
		options.WithAuthPassword(s.o.Password),
		options.WithAuthSecondary(s.secret),
		options.WithPort(s.o.Port),
		options.WithTransportType(s.tport),
		options.WithTimeoutSocket(rem),
		options.WithTimeoutOps(rem),
	}
	opts = append(opts, s.leanTransport()...)
	p, err := platform.NewPlatform(s.scrapli, s.o.Host, opts...)
	if err != nil {
		return s.errf(ErrInvalidArgument, "open", err)
	}
	d, err := p.GetNetworkDriver()
	if err != nil {
		return s.errf(ErrInvalidArgument, "open", err)
	}
	// The platform's on-open and on-close closures keep p alive with the
	// driver; p's own reference to the privilege levels must not keep the
	// per-connection copies alive once the driver shares the cache's.
	p.PrivilegeLevels = nil
	s.o.Prompts.share(d)
	platformOnOpen := d.OnOpen
	d.OnOpen = func(nd *network.Driver) error {
		if err := s.enable(nd); err != nil {
			return err
		}
		if platformOnOpen != nil {
			return platformOnOpen(nd)
		}
		return nil
	}
	s.log.Debug("driver: opening", "driver", s.name, "addr", s.addr)
	// The SSH handshake is unbounded: the open is abandoned (and closed
	// once it returns) when the time is up.
	abandoned, err := openWithin(ctx, rem, d.Open, func() { _ = d.Channel.Close() })
	if abandoned {
		return s.ctxErr("open", err)
	}
	if err != nil {
		return s.classifyOpen(err, dl)
	}
	s.d = d
	s.openedAt = time.Now()
	return nil
}

func (s *session) classifyOpen(err error, dl time.Time) error {
	msg := err.Error()
	switch {
	case errors.Is(err, ErrAuth):
		return err
	case errors.Is(err, util.ErrAuthError) || strings.Contains(msg, "unable to authenticate") ||
		strings.Contains(msg, "no supported methods remain"):
		return s.errf(ErrAuth, "login refused", err)
	case errors.Is(err, util.ErrPrivilegeError):
		return s.errf(ErrAuth, "cannot enter privileged exec mode (enable secret?)", err)
	case errors.Is(err, util.ErrTimeoutError) || isNetTimeout(err) || !time.Now().Before(dl):
		return fmt.Errorf("%w: %w", ErrConnect, s.errf(ErrTimeout, "open", err))
	}
	return s.errf(ErrConnect, "open", err)
}

var (
	passwordRe  = regexp.MustCompile(`(?im)^(?:enable\s)?password:\s?$`)
	badSecretRe = regexp.MustCompile(`(?i)% ?(?:bad secrets|access denied|authentication failed)`)
)

// enable enters privileged exec mode when the login lands in user exec.
// scrapligo's own escalation waits for a prompt after sending the secret,
// so a wrong secret that makes IOS ask "Password:" again would only end
// with the operation timeout; here the question is recognised and the
// open fails at once with ErrAuth.
func (s *session) enable(d *network.Driver) error {
	exec, ok := d.PrivilegeLevels["exec"]
	if _, hasEnable := d.PrivilegeLevels["privilege-exec"]; !ok || !hasEnable {
		return nil // no enable on this platform (cisco_iosxr's "exec" is the "#" prompt)
	}
	execRe, err := regexp.Compile(exec.Pattern)
	if err != nil {
		return nil //nolint:nilerr // leave escalation to scrapligo
	}
	prompt, err := d.Channel.GetPrompt()
	if err != nil {
		return err
	}
	if !execRe.Match(prompt) {
		return nil
	}
	interim := opoptions.WithInterimPromptPattern([]*regexp.Regexp{passwordRe})
	b, err := d.Channel.SendInput("enable", interim)
	if err != nil {
		return err
	}
	if passwordRe.MatchString(lastLine(string(b))) {
		b, err = d.Channel.SendInteractive([]*channel.SendInteractiveEvent{{ChannelInput: s.secret, HideInput: true}},
			opoptions.WithCompletePatterns([]*regexp.Regexp{passwordRe}))
		if err != nil {
			return err
		}
		if passwordRe.MatchString(lastLine(string(b))) {
			// Asked again: give up the question (Ctrl-C) and resynchronise.
			_ = d.Channel.Write([]byte{3}, true)
			_, _ = d.Channel.GetPrompt()
			return s.errf(ErrAuth, "enable secret refused", nil)
		}
	}
	if badSecretRe.Match(b) {
		return s.errf(ErrAuth, "enable secret refused", errors.New(deviceMessage(string(b))))
	}
	prompt, err = d.Channel.GetPrompt()
	if err != nil {
		return err
	}
	if execRe.Match(prompt) {
		return s.errf(ErrAuth, "cannot enter privileged exec mode", errors.New(deviceMessage(string(b))))
	}
	return nil
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// close logs out (bounded by closeGrace) and closes the connection.
func (s *session) close(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	d := s.d
	if d == nil {
		return nil
	}
	s.d = nil
	rem := min(time.Until(s.deadline(ctx)), closeGrace)
	if rem <= 0 {
		return d.Channel.Close()
	}
	d.Channel.TimeoutOps = rem
	stop := context.AfterFunc(ctx, func() { _ = d.Channel.Close() })
	defer stop()
	if err := d.Close(); err != nil && !errors.Is(err, io.EOF) {
		return s.errf(ErrConnect, "close", err)
	}
	return nil
}

// op is one driver operation: the connection and its time budget.
type op struct {
	s        *session
	d        *network.Driver
	ctx      context.Context
	deadline time.Time
	fatal    bool // the connection must be dropped afterwards
}

// run executes fn as one operation; see Driver for the time rules.
func (s *session) run(ctx context.Context, fn func(o *op) error) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := ctx.Err(); err != nil {
		// Do not let AfterFunc close a healthy connection for a caller
		// that gave up before the operation started.
		return s.ctxErr("waiting for the connection", err)
	}
	if s.d == nil {
		return s.notOpen()
	}
	o := &op{s: s, d: s.d, ctx: ctx, deadline: s.deadline(ctx)}
	d := s.d
	stop := context.AfterFunc(ctx, func() { _ = d.Channel.Close() })
	err := fn(o)
	if !stop() || o.fatal {
		// The context ended (closing the channel) or the connection is in
		// an unknown state: drop it, the caller reopens.
		s.drop()
		if err == nil && ctx.Err() != nil {
			err = s.ctxErr("operation", ctx.Err())
		}
	}
	return err
}

// budget sets scrapligo's operation timeout to what is left.
func (o *op) budget(what string) error {
	rem := time.Until(o.deadline)
	if rem <= 0 {
		o.fatal = true
		if err := o.ctx.Err(); err != nil {
			return o.s.ctxErr(what, err)
		}
		return o.s.errf(ErrTimeout, what, nil)
	}
	o.d.Channel.TimeoutOps = rem
	return nil
}

// fail classifies a scrapligo error of the command what.
func (o *op) fail(what string, err error) error {
	o.fatal = true
	if cerr := o.ctx.Err(); cerr != nil {
		return o.s.ctxErr(what, cerr)
	}
	switch {
	case errors.Is(err, util.ErrTimeoutError) || !time.Now().Before(o.deadline):
		return o.s.errf(ErrTimeout, what, err)
	case errors.Is(err, util.ErrPrivilegeError):
		return o.s.errf(ErrCommand, what+": privilege level", err)
	case errors.Is(err, util.ErrConnectionError) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed):
		return o.s.errf(ErrConnect, what+": connection lost", err)
	}
	return o.s.errf(ErrConnect, what, err)
}

// send runs one exec command in privileged exec mode and returns its output
// and whether the device reported a failure (failed-when-contains).
func (o *op) send(cmd string) (string, bool, error) {
	if err := o.budget(cmd); err != nil {
		return "", false, err
	}
	o.s.log.Debug("driver: send", "driver", o.s.name, "addr", o.s.addr, "command", cmd)
	r, err := o.d.SendCommand(cmd)
	if err != nil {
		return "", false, o.fail(cmd, err)
	}
	return r.Result, r.Failed != nil, nil
}

// show runs a command that must succeed.
func (o *op) show(cmd string) (string, error) {
	out, failed, err := o.send(cmd)
	if err != nil {
		return "", err
	}
	if failed {
		return out, o.rejected(cmd, out)
	}
	return out, nil
}

// rejected reports a command the device refused, quoting its message.
func (o *op) rejected(cmd, out string) error {
	return o.s.errf(ErrCommand, cmd, errors.New(deviceMessage(out)))
}

// deviceMessage returns the error lines of a device's output.
func deviceMessage(out string) string {
	var keep []string
	for l := range strings.SplitSeq(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.Trim(t, "^ ") == "" {
			continue
		}
		keep = append(keep, t)
	}
	msg := strings.Join(keep, " / ")
	if len(msg) > 400 {
		msg = msg[:400] + "..."
	}
	if msg == "" {
		msg = "command failed"
	}
	return msg
}

// questionRe matches the questions IOS asks during copy, delete and
// similar commands ("Destination filename [x]? ", "[confirm]").
var questionRe = regexp.MustCompile(`(?m)(?:\[[^\]\r\n]*\]\?\s*$|\[confirm\]\s*$|\[yes/no\]:?\s*$)`)

// maxAnswers bounds the questions answered for one interactive command.
const maxAnswers = 8

// interactive runs cmd in privileged exec mode, accepting the default
// answer of each question the device asks, and returns the whole output.
func (o *op) interactive(cmd string) (string, bool, error) {
	if err := o.budget(cmd); err != nil {
		return "", false, err
	}
	if o.d.CurrentPriv != o.d.DefaultDesiredPriv {
		if err := o.d.AcquirePriv(o.d.DefaultDesiredPriv); err != nil {
			return "", false, o.fail(cmd, err)
		}
	}
	o.s.log.Debug("driver: send interactive", "driver", o.s.name, "addr", o.s.addr, "command", cmd)
	interim := opoptions.WithInterimPromptPattern([]*regexp.Regexp{questionRe})
	var all strings.Builder
	input := cmd
	for range maxAnswers {
		if err := o.budget(cmd); err != nil {
			return "", false, err
		}
		b, err := o.d.Channel.SendInput(input, interim)
		if err != nil {
			return "", false, o.fail(cmd, err)
		}
		out := string(b)
		all.WriteString(out)
		if !questionRe.MatchString(lastLine(out)) {
			text := all.String()
			return text, containsAny(text, o.d.FailedWhenContains), nil
		}
		all.WriteString("\n")
		input = "" // accept the default answer
	}
	o.fatal = true
	return "", false, o.s.errf(ErrCommand, cmd, errors.New("too many questions from the device"))
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// sendRaw sends one line at the current prompt without privilege handling
// (configuration sessions, tclsh) and returns the output and whether it
// failed.
func (o *op) sendRaw(line string) (string, bool, error) {
	if err := o.budget(line); err != nil {
		return "", false, err
	}
	o.s.log.Debug("driver: send raw", "driver", o.s.name, "addr", o.s.addr, "line", line)
	r, err := o.d.Driver.SendCommand(line)
	if err != nil {
		return "", false, o.fail(line, err)
	}
	return r.Result, r.Failed != nil, nil
}

// home returns to privileged exec mode after raw lines left the driver in
// privilege level cur (scrapligo cannot always tell it from the prompt: on
// arista_eos the privilege-exec pattern also matches configuration prompts).
func (o *op) home(cur string) error {
	if err := o.budget("return to privileged exec"); err != nil {
		return err
	}
	o.d.CurrentPriv = cur
	if err := o.d.AcquirePriv(o.d.DefaultDesiredPriv); err != nil {
		return o.fail("return to privileged exec", err)
	}
	return nil
}

// optString reads a string optional argument.
func optString(m map[string]any, key, def string) string {
	if v, ok := m[key]; ok && v != nil {
		switch x := v.(type) {
		case string:
			return x
		case []byte:
			return string(x)
		default:
			return fmt.Sprint(x)
		}
	}
	return def
}

// optInt reads an integer optional argument.
func optInt(m map[string]any, key string, def int) int {
	switch x := m[key].(type) {
	case int:
		return x
	case int64:
		return int(x)
	case uint64:
		return int(x)
	case float64:
		return int(x)
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n
		}
	}
	return def
}

// optBool reads a boolean optional argument.
func optBool(m map[string]any, key string, def bool) bool {
	switch x := m[key].(type) {
	case bool:
		return x
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b
		}
	case int64:
		return x != 0
	case int:
		return x != 0
	}
	return def
}
