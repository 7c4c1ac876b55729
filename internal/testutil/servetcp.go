package testutil

import (
	"net"
	"sync"
	"testing"
)

// TCPServer is a test's TCP server on 127.0.0.1 (ServeTCP).
type TCPServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

// ServeTCP listens on 127.0.0.1 (a free port) and runs handle on each
// accepted connection in a goroutine of its own; the connection is closed
// when handle returns. The server stops (Close) when the test ends.
func ServeTCP(t testing.TB, handle func(net.Conn)) *TCPServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &TCPServer{ln: ln, open: map[net.Conn]struct{}{}}
	t.Cleanup(s.Close)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !s.track(c) {
				_ = c.Close()
				return
			}
			go func() {
				defer s.wg.Done()
				defer s.untrack(c)
				handle(c)
			}()
		}
	}()
	return s
}

// Addr is the address the server listens on.
func (s *TCPServer) Addr() net.Addr { return s.ln.Addr() }

// Close closes the listener and every connection still open, then waits
// for the accept loop and the handlers to return (a handler blocked
// reading or writing its connection returns then). It may be called more
// than once.
func (s *TCPServer) Close() {
	_ = s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.open {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// track registers c and its handler; false once the server is closed.
func (s *TCPServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.open[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *TCPServer) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
	_ = c.Close()
}
