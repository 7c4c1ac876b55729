package testutil

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DelayProxy listens on 127.0.0.1 (a free port) and forwards every
// connection to upstream; what the client sends reaches upstream delay
// after the proxy read it (in order), what upstream sends goes back at
// once. A test puts it in front of a server to play a peer whose requests
// the server reads late (a busy machine). It stops when the test ends and
// returns its address.
func DelayProxy(t testing.TB, upstream string, delay time.Duration) string {
	t.Helper()
	return forwardProxy(t, upstream, delay, nil)
}

// CountingProxy is a DelayProxy without delay that counts the connections
// it accepts: a test puts it in front of a server to see how many
// connections a client opened. accepted returns the count so far.
func CountingProxy(t testing.TB, upstream string) (addr string, accepted func() int64) {
	t.Helper()
	var n atomic.Int64
	return forwardProxy(t, upstream, 0, func() { n.Add(1) }), n.Load
}

// forwardProxy is DelayProxy calling onAccept (when not nil) for each
// accepted connection.
func forwardProxy(t testing.TB, upstream string, delay time.Duration, onAccept func()) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	track := func(c ...net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if conns == nil {
			return false // closed
		}
		conns = append(conns, c...)
		return true
	}
	conns = []net.Conn{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if onAccept != nil {
				onAccept()
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !track(c, up) {
				_ = c.Close()
				_ = up.Close()
				return
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, up)
				_ = c.Close()
			}()
			go func() {
				defer wg.Done()
				delayCopy(up, c, delay)
				_ = up.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		conns = nil
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// delayCopy copies src to dst, each chunk delay after it was read.
func delayCopy(dst io.Writer, src io.Reader, delay time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	q := make(chan chunk, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ch := range q {
			// The delay is what this proxy is for: it plays a late reader.
			time.Sleep(time.Until(ch.at))
			if _, err := dst.Write(ch.b); err != nil {
				for range q {
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(delay)}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
}
