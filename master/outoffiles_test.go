package master

import (
	"crypto/rsa"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestKeyUnreadableNoReply: while the master is out of file descriptors
// and cannot read a minion's accepted key, a _return and a _pillar get no
// reply at all, nor does a _minion_event, so that the minion sends them
// again; an answer would have told the minion its return or event was
// done (and lost it) or handed it an empty pillar. Sent again once
// descriptors are back, the return is stored and fired.
func TestKeyUnreadableNoReply(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	jid := e.pingJob("m1")
	c := e.m.accepted
	c.mu.Lock()
	c.load = func(path string) (*rsa.PublicKey, error) {
		return nil, fmt.Errorf("crypt: load public key: %w", &fs.PathError{Op: "open", Path: path, Err: syscall.EMFILE})
	}
	clear(c.m)
	c.mu.Unlock()
	for _, load := range []*payload.Map{
		returnLoad("m1", jid, true),
		pillarLoad("m1", payload.NewMap("os", "Debian")),
		payload.NewMap("id", "m1", "cmd", "_minion_event", "tok", tm.tok(t), "data", payload.NewMap(), "tag", "my/event"),
	} {
		frame, _, err := message.EncodeAESRequest(tm.sess, load)
		if err != nil {
			t.Fatal(err)
		}
		if reply, ok := e.request(frame); ok {
			t.Errorf("%s answered (%d bytes) while the minion's key could not be read", load.Str("cmd"), len(reply))
		}
	}
	e.noEvent("salt/job/")
	e.noEvent("my/event")
	if job, err := e.jobs.Get(jid); err != nil || len(job.Returns) != 0 {
		t.Fatalf("returns stored while the key could not be read: %v %v", job, err)
	}

	c.mu.Lock()
	c.load = crypt.LoadPublicKey
	c.mu.Unlock()
	if got := e.mustAES(tm, returnLoad("m1", jid, true)); got != nil {
		t.Fatalf("_return reply %v, want nil", got)
	}
	e.waitEvent("salt/job/" + jid + "/ret/m1")
	if job, err := e.jobs.Get(jid); err != nil || job.Returns["m1"] == nil {
		t.Fatalf("the return sent again was not stored: %v %v", job, err)
	}
}

// TestServeFileOutOfFilesNoReply: a _serve_file whose chunk cannot be
// opened because the process is out of descriptors (RLIMIT_NOFILE set
// just above the descriptors open) gets no reply, so that the minion
// asks again, where any other failure is Salt's "" (an exception); with
// descriptors back the same request is served.
func TestServeFileOutOfFilesNoReply(t *testing.T) {
	e := newEnv(t, "")
	fileTree(t, e)
	tm := e.login("minion1", "m1")
	load := payload.NewMap("cmd", "_serve_file", "path", "sub/a.txt", "saltenv", "base", "loc", 0, "id", "m1")
	frame, nonce, err := message.EncodeAESRequest(tm.sess, load)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	// The lowest free descriptor becomes the limit: the next open fails.
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	next := uint64(f.Fd())
	_ = f.Close()
	lim := old
	lim.Cur = next
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	reply, ok := e.request(frame)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if ok {
		got, err := message.OpenSendReply(tm.sess, reply, nonce, payload.DefaultLimits)
		t.Fatalf("_serve_file answered %v (%v) while out of descriptors", got, err)
	}
	got, err := e.aes(tm, load)
	if m, _ := got.(*payload.Map); err != nil || m == nil || string(m.Bytes("data")) != "hello world, this is a.txt\n" {
		t.Fatalf("_serve_file with descriptors back: %v %v", got, err)
	}
}
