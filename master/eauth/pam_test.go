package eauth

import (
	"os"
	"os/exec"
	"testing"

	"github.com/gsalt/gsalt/internal/testlab"
)

// TestPAM authenticates a throwaway system user through the real PAM
// stack (service login) and reads its groups. Needs root for useradd.
func TestPAM(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pam: needs root to create a test user; skipping")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("pam: useradd not found; skipping")
	}
	u := testlab.AddUser(t, "gsalt-test-pam", "", "/bin/sh", "adm")
	b, err := NewBackend("pam", Env{Opts: optsOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := b.Auth(u.Name, u.Password)
	if err == ErrPAMUnavailable {
		t.Skip("pam: libpam not usable in this build")
	}
	if !ok {
		t.Fatalf("pam refused the right password: %v", err)
	}
	if ok, _ := b.Auth(u.Name, u.Password+"x"); ok {
		t.Fatal("pam accepted a wrong password")
	}
	if ok, _ := b.Auth("gsalt-test-nouser", "x"); ok {
		t.Fatal("pam accepted an unknown user")
	}
	g, err := b.Groups(u.Name)
	found := false
	for _, n := range g {
		found = found || n == "adm"
	}
	if err != nil || !found {
		t.Fatalf("groups %v %v", g, err)
	}
}
