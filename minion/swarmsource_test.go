package minion

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

func TestSwarmSources(t *testing.T) {
	for _, tc := range []struct {
		cidr    string
		n       int
		want    map[int]string
		wantErr bool
	}{
		{cidr: "", n: 3, want: map[int]string{0: "", 2: ""}},
		{cidr: "127.1.0.0/16", n: 10000, want: map[int]string{0: "127.1.0.1", 254: "127.1.0.255", 255: "127.1.1.0", 9999: "127.1.39.16"}},
		{cidr: "127.2.3.4/30", n: 3, want: map[int]string{0: "127.2.3.5", 2: "127.2.3.7"}},
		{cidr: "127.2.3.4/30", n: 4, wantErr: true},
		{cidr: "fd00::/120", n: 255, want: map[int]string{0: "fd00::1", 254: "fd00::ff"}},
		{cidr: "127.1.0.0", n: 1, wantErr: true},
	} {
		f, err := swarmSources(tc.cidr, tc.n)
		if (err != nil) != tc.wantErr {
			t.Errorf("swarmSources(%q, %d): %v, want error %v", tc.cidr, tc.n, err, tc.wantErr)
			continue
		}
		for i, want := range tc.want {
			if got := f(i); got != want {
				t.Errorf("swarmSources(%q)(%d) = %q, want %q", tc.cidr, i, got, want)
			}
		}
	}
}

// TestSwarmSourceNet runs a swarm whose identities connect from their own
// loopback addresses and checks where the master saw each sign-in come
// from; a minion's source_address does the same for one minion, and one
// that is not an IP address is refused at start.
func TestSwarmSourceNet(t *testing.T) {
	const n = 3
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master", "master.pem"), 0, 0)
	cfg := swarmConfig(t, fm, "sw", n)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunSwarm(ctx, SwarmOptions{Config: cfg, N: n, SourceNet: "127.9.0.0/24", Logger: testLogger(t)})
	}()
	defer func() {
		cancel()
		<-done
	}()
	want := map[string]string{"sw-0000": "127.9.0.1", "sw-0001": "127.9.0.2", "sw-0002": "127.9.0.3"}
	if !testutil.Poll(testutil.Scale(30*time.Second), func() bool {
		fm.mu.Lock()
		defer fm.mu.Unlock()
		for id, ip := range want {
			if fm.authFrom[id] != ip {
				return false
			}
		}
		return true
	}) {
		fm.mu.Lock()
		defer fm.mu.Unlock()
		t.Fatalf("sign-ins came from %v, want %v", fm.authFrom, want)
	}

	one := minionConfig(t, "solo", fm, fmt.Sprintf("publish_port: %d\nsource_address: 127.9.1.7\n", fm.pubPort()))
	installKey(t, one, "minion1")
	fm.set("solo", "accept")
	m, err := New(Options{Config: one, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	mctx, mcancel := context.WithCancel(context.Background())
	mdone := make(chan error, 1)
	go func() { mdone <- m.Run(mctx) }()
	defer func() {
		mcancel()
		<-mdone
	}()
	testutil.Eventually(t, testutil.Scale(30*time.Second), func() bool {
		fm.mu.Lock()
		defer fm.mu.Unlock()
		return fm.authFrom["solo"] == "127.9.1.7"
	}, "the minion with source_address 127.9.1.7 signing in from it")

	bad := minionConfig(t, "bad", fm, "source_address: not-an-ip\n")
	if _, err := New(Options{Config: bad, Logger: testLogger(t)}); !errors.Is(err, ErrSourceAddress) {
		t.Fatalf("source_address not-an-ip: %v, want ErrSourceAddress", err)
	}
}
