package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gsalt/gsalt/internal/natstest"
	"github.com/gsalt/gsalt/internal/testutil"
)

// TestWatch: -watch publishes every <device>.cfg at the start and again
// whenever its content changes (not when it is rewritten unchanged);
// hidden, temporary and other files are ignored.
func TestWatch(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{})
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("dc1.>")
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	dir := t.TempDir()
	// Written atomically (a hidden temporary file renamed), as the README
	// asks: the watcher never sees a half-written file.
	write := func(name, text string) {
		t.Helper()
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	next := func() (string, string) {
		t.Helper()
		m, err := sub.NextMsg(testutil.Scale(10 * time.Second))
		if err != nil {
			t.Fatalf("no message: %v", err)
		}
		return m.Subject, string(m.Data)
	}
	write("sw1.cfg", "hostname sw1\n")
	if err := os.WriteFile(filepath.Join(dir, ".sw2.cfg.tmp"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("notes.txt", "not a device")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	p := &publisher{nc: nc, subject: "dc1.{device}.configure", prefix: "salt"}
	go func() { done <- p.watch(ctx, dir, 20*time.Millisecond) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("watch: %v", err)
		}
	}()
	if s, d := next(); s != "dc1.sw1.configure" || d != "hostname sw1\n" {
		t.Fatalf("first: %s %q", s, d)
	}
	write("sw1.cfg", "hostname sw1\n") // unchanged
	write("sw2.cfg", "hostname sw2\n")
	if s, d := next(); s != "dc1.sw2.configure" || d != "hostname sw2\n" {
		t.Fatalf("second: %s %q", s, d)
	}
	write("sw1.cfg", "hostname sw1\nntp server 192.0.2.1\n")
	if s, d := next(); s != "dc1.sw1.configure" || d != "hostname sw1\nntp server 192.0.2.1\n" {
		t.Fatalf("third: %s %q", s, d)
	}
	if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("unexpected message %s %q", m.Subject, m.Data)
	}
}
