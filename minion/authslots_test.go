package minion

import (
	"path/filepath"
	"testing"
	"time"
)

// TestAuthSlots: a minion given AuthSlots signs in only once it holds a
// slot, and gives the slot back after its _auth.
func TestAuthSlots(t *testing.T) {
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	fm.set("m1", "accept")
	slots := make(chan struct{}, 1)
	slots <- struct{}{} // another identity is signing in
	m, stop := startMinion(t, minionConfig(t, "m1", fm, ""), Options{AuthSlots: slots})
	defer stop()
	// While the only slot is taken, nothing reaches the master.
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := fm.authCount("m1"); n != 0 {
			t.Fatalf("%d _auth requests while every slot was taken", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-slots
	waitReady(t, m, wait)
	if fm.authCount("m1") == 0 {
		t.Fatal("ready without an _auth")
	}
	if len(slots) != 0 {
		t.Fatal("the minion kept its auth slot after signing in")
	}
}
