package testutil_test

import (
	"bufio"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestServeTCP: each connection gets its own handler (two at once here),
// a handler's return closes its connection, and the end of the test
// closes the listener and the connections a handler still holds.
func TestServeTCP(t *testing.T) {
	var served atomic.Int32
	var addr string
	held := make(chan net.Conn, 1)
	t.Run("serve", func(t *testing.T) {
		srv := testutil.ServeTCP(t, func(c net.Conn) {
			served.Add(1)
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return
			}
			if line == "hold\n" {
				_, _ = io.Copy(io.Discard, c) // until the test's end closes it
				return
			}
			_, _ = c.Write([]byte("echo " + line))
		})
		addr = srv.Addr().String()
		a, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for i, c := range []net.Conn{b, a} { // b first: the handlers run side by side
			_ = c.SetDeadline(time.Now().Add(testutil.Scale(10 * time.Second)))
			if _, err := c.Write([]byte("x\n")); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(c) // the handler returned: EOF
			if err != nil || string(got) != "echo x\n" {
				t.Fatalf("connection %d read %q, %v", i, got, err)
			}
		}
		h, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Write([]byte("hold\n")); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return served.Load() == 3 }, "the third handler")
		held <- h
	})
	h := <-held
	defer h.Close()
	_ = h.SetReadDeadline(time.Now().Add(testutil.Scale(10 * time.Second)))
	if n, err := h.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the held connection read %d, %v after the test's end; want EOF", n, err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after the test's end")
	}
}

// TestServeTCPClose: Close stops the server before the test ends, closing
// a held connection, and a second Close (the test's end) is harmless.
func TestServeTCPClose(t *testing.T) {
	running := make(chan struct{})
	srv := testutil.ServeTCP(t, func(c net.Conn) {
		close(running)
		_, _ = io.Copy(io.Discard, c)
	})
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-running
	srv.Close()
	_ = c.SetReadDeadline(time.Now().Add(testutil.Scale(10 * time.Second)))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read %d, %v after Close; want EOF", n, err)
	}
}
