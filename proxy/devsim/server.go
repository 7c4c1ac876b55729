package devsim

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

var errAuth = errors.New("devsim: authentication failed")

func (f *Fleet) credsOK(user, pass string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(f.opts.User))
	p := subtle.ConstantTimeCompare([]byte(pass), []byte(f.opts.Password))
	return u&p == 1
}

// serverConfig builds the SSH configuration shared by devices; accept false rejects everyone.
func (f *Fleet) serverConfig(accept bool) *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		MaxAuthTries: 6,
		PasswordCallback: func(m ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if accept && f.credsOK(m.User(), string(pw)) {
				return nil, nil
			}
			return nil, errAuth
		},
		KeyboardInteractiveCallback: func(m ssh.ConnMetadata, ch ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			ans, err := ch("", "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if accept && len(ans) == 1 && f.credsOK(m.User(), ans[0]) {
				return nil, nil
			}
			return nil, errAuth
		},
		ServerVersion: f.plat.def.Identity.SSHVersion,
	}
	cfg.AddHostKey(f.hostKey)
	return cfg
}

// idleConn extends its read deadline on every read, closing idle connections.
type idleConn struct {
	net.Conn
	idle atomic.Int64 // time.Duration
}

func (c *idleConn) Read(b []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(time.Duration(c.idle.Load())))
	return c.Conn.Read(b)
}

func (f *Fleet) serveConn(d *Device, c net.Conn) {
	ic := &idleConn{Conn: c}
	ic.idle.Store(int64(handshakeTimeout))
	cfg := f.okConfig
	if d.Fault() == FaultBadAuth {
		cfg = f.badConfig
	}
	sc, chans, reqs, err := ssh.NewServerConn(ic, cfg)
	if err != nil {
		f.opts.Logger.Debug("devsim: handshake", "device", d.name, "err", err)
		return
	}
	ic.idle.Store(int64(f.opts.IdleTimeout))
	d.addConn(sc)
	defer d.removeConn(sc)
	done := make(chan struct{})
	go func() {
		_ = sc.Wait()
		close(done)
	}()
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	open := 0
	var mu sync.Mutex
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "unsupported channel type")
			continue
		}
		mu.Lock()
		full := open >= maxChannelsPerConn
		if !full {
			open++
		}
		mu.Unlock()
		if full {
			_ = nc.Reject(ssh.ResourceShortage, "too many sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			mu.Lock()
			open--
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			defer func() {
				mu.Lock()
				open--
				mu.Unlock()
			}()
			if f.serveSession(d, sc, ch, creqs, done) {
				_ = sc.Close()
			}
		})
	}
	wg.Wait()
}

// serveSession handles one session channel; it returns true when the whole connection should
// be closed (the user logged out of the shell).
func (f *Fleet) serveSession(d *Device, sc *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request, done <-chan struct{}) bool {
	defer ch.Close()
	started := false
	width := 80
	shellDone := make(chan bool, 1)
	for {
		select {
		case req, ok := <-reqs:
			if !ok {
				if started {
					return <-shellDone
				}
				return false
			}
			switch req.Type {
			case "pty-req":
				if w, ok := ptyWidth(req.Payload); ok {
					width = w
				}
				_ = req.Reply(true, nil)
			case "env", "window-change":
				if req.WantReply {
					_ = req.Reply(true, nil)
				}
			case "shell", "exec":
				if started {
					_ = req.Reply(false, nil)
					continue
				}
				started = true
				_ = req.Reply(true, nil)
				sh := newShell(d, sc.User(), ch, done, func() { _ = sc.Close() })
				sh.termWidth = width
				if req.Type == "exec" {
					cmd, ok := sshString(req.Payload)
					go func() {
						if ok && !f.plat.handleRawExec(sh, cmd, ch) {
							sh.runExec(cmd)
						}
						_, _ = ch.SendRequest("exit-status", false, []byte{0, 0, 0, 0})
						shellDone <- false
					}()
					continue
				}
				go func() {
					logout := sh.run(ch)
					_, _ = ch.SendRequest("exit-status", false, []byte{0, 0, 0, 0})
					shellDone <- logout
				}()
			default:
				if req.WantReply {
					_ = req.Reply(false, nil)
				}
			}
		case logout := <-shellDone:
			return logout
		case <-done:
			if started {
				<-shellDone
			}
			return false
		}
	}
}

// ptyWidth extracts the terminal width from a pty-req payload.
func ptyWidth(p []byte) (int, bool) {
	_, rest, ok := sshStringRest(p)
	if !ok || len(rest) < 4 {
		return 0, false
	}
	w := int(binary.BigEndian.Uint32(rest))
	if w <= 0 || w > 32767 {
		return 0, false
	}
	return w, true
}

func sshString(p []byte) (string, bool) {
	s, _, ok := sshStringRest(p)
	return s, ok
}

func sshStringRest(p []byte) (string, []byte, bool) {
	if len(p) < 4 {
		return "", nil, false
	}
	n := binary.BigEndian.Uint32(p)
	if uint64(n) > uint64(len(p)-4) {
		return "", nil, false
	}
	return string(p[4 : 4+n]), p[4+n:], true
}
