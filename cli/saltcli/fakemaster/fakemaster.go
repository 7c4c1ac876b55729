// Package fakemaster is a scripted stand-in for a Salt master in the tests
// of the gsalt CLIs: a real request server (ZeroMQ REQ/ROUTER on 127.0.0.1)
// answering clear requests with a test-supplied handler, a real master event
// bus in a short sock_dir, a root key in cachedir and a master config file
// pointing at them.
package fakemaster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
	"github.com/gsalt/gsalt/wire/transport"
)

// Key is the root key the fake master accepts.
const Key = "Y/fA/k5CjzLv9Xp129pTLHI/jkJSVNaNCp9aCHYhw999gAz7hbKP8IogndpbL8Cdchu3J47imX8="

// Handler answers one clear load; the returned value is the reply.
type Handler func(m *Master, load *payload.Map) any

// Master is a running fake master.
type Master struct {
	// Dir is the config dir (holding "master").
	Dir     string
	SockDir string
	Bus     *event.Bus

	t      testing.TB
	cancel context.CancelFunc
	stop   <-chan struct{}
	ipc    *event.IPCServer
	req    *transport.ReqServer

	mu        sync.Mutex
	lastLater chan struct{} // closed when the last Later event has fired
	loads     []*payload.Map
	handler   Handler
	jid       int
	wg        sync.WaitGroup
}

// Start runs a fake master; extraConfig is appended to its config file.
// Everything stops when the test ends.
func Start(t testing.TB, h Handler, extraConfig string) *Master {
	t.Helper()
	dir, err := os.MkdirTemp("", "gsfm")
	if err != nil {
		t.Fatal(err)
	}
	m := &Master{Dir: dir, SockDir: filepath.Join(dir, "s"), t: t, handler: h}
	cache := filepath.Join(dir, "cache")
	for _, d := range []string{m.SockDir, cache, filepath.Join(dir, "pki")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	for _, ku := range []string{"root", u.Username} {
		if err := os.WriteFile(filepath.Join(cache, "."+ku+"_key"), []byte(Key), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.stop = ctx.Done()
	quiet := slog.New(slog.NewTextHandler(discard{}, nil))
	m.Bus = event.New(event.Options{Logger: quiet})
	m.ipc, err = event.ServeIPC(ctx, m.Bus, filepath.Join(m.SockDir, event.MasterPubSocket), filepath.Join(m.SockDir, event.MasterPullSocket))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	m.req, err = transport.ListenReq(ctx, "127.0.0.1:0", m.serve, transport.ReqOptions{Logger: quiet})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	port := m.req.Addr().(*net.TCPAddr).Port
	cfg := fmt.Sprintf("interface: 127.0.0.1\nret_port: %d\npublish_port: %d\nsock_dir: %s\ncachedir: %s\npki_dir: %s\nlog_file: %s\nuser: %s\n%s",
		port, port+1, m.SockDir, cache, filepath.Join(dir, "pki"), filepath.Join(dir, "log"), u.Username, extraConfig)
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Stop shuts the servers down (also done at cleanup).
func (m *Master) Stop() {
	m.cancel()
	m.wg.Wait()
	_ = m.req.Close()
	_ = m.ipc.Close()
	m.Bus.Close()
	_ = os.RemoveAll(m.Dir)
}

func (m *Master) serve(_ context.Context, frame []byte) ([]byte, bool) {
	req, err := message.ParseRequest(frame, payload.DefaultLimits)
	if err != nil || req.Enc != message.EncClear {
		b, _ := payload.Marshal(message.BadLoadText)
		return b, true
	}
	m.mu.Lock()
	m.loads = append(m.loads, req.Load.Clone())
	m.mu.Unlock()
	reply := m.handler(m, req.Load)
	b, err := payload.Marshal(reply)
	if err != nil {
		m.t.Errorf("fake master: encoding the reply: %v", err)
		b, _ = payload.Marshal(map[string]any{})
	}
	return b, true
}

// Loads returns the clear loads received so far, in order.
func (m *Master) Loads() []*payload.Map {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*payload.Map(nil), m.loads...)
}

// NextJID hands out increasing jids.
func (m *Master) NextJID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jid++
	return "2026112205000000" + fmt.Sprintf("%04d", m.jid)
}

// Fire publishes an event on the bus.
func (m *Master) Fire(tag string, data *payload.Map) {
	if err := m.Bus.Fire(event.Event{Tag: tag, Data: data}); err != nil {
		m.t.Errorf("fake master: firing %s: %v", tag, err)
	}
}

// Later fires an event after d, unless the master stopped.
//
// Events of Later fire in the order of the calls (each not before its own
// delay): a loaded machine may run two timers a few milliseconds apart in
// either order, and a job's progress event then came after its return.
func (m *Master) Later(d time.Duration, tag string, data *payload.Map) {
	m.mu.Lock()
	prev := m.lastLater
	mine := make(chan struct{})
	m.lastLater = mine
	m.mu.Unlock()
	m.AfterFunc(d, func() {
		if prev != nil {
			select {
			case <-prev:
			case <-m.done():
				return
			}
		}
		m.Fire(tag, data)
		close(mine)
	})
}

// AfterFunc runs fn after d, unless the master stopped first.
func (m *Master) AfterFunc(d time.Duration, fn func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			fn()
		case <-m.done():
		}
	}()
}

func (m *Master) done() <-chan struct{} { return m.stop }

// AuthError is the master's reply to a bad key.
func AuthError() *payload.Map {
	return payload.NewMap("error", payload.NewMap("name", "AuthenticationError", "message", "Authentication error occurred."))
}

// PublishReply is the master's reply to an accepted publish.
func PublishReply(jid string, minions []string) *payload.Map {
	l := make([]any, len(minions))
	for i, id := range minions {
		l[i] = id
	}
	return payload.NewMap("enc", "clear", "load", payload.NewMap("jid", jid, "minions", l))
}

// Return builds a minion's return event data like the master fires it.
func Return(id, jid, fun string, ret any, retcode int) *payload.Map {
	return payload.NewMap("cmd", "_return", "id", id, "success", retcode == 0, "return", ret,
		"retcode", int64(retcode), "jid", jid, "fun", fun, "fun_args", []any{})
}
