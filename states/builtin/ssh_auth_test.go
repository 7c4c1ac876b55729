package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

const (
	saKey1 = "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7key1key1key1key1key1key1key1key1key1=="
	saKey2 = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
)

// TestSSHAuthStatesGolden compares ssh_auth.present, absent and manage
// (and test=True) for root with an absolute authorized_keys path in a
// temporary directory, with Salt 3006 (testdata/golden/ssh_auth.json).
func TestSSHAuthStatesGolden(t *testing.T) {
	ak := map[string]string{"ak": "ssh-rsa " + saKey1 + " alice@host\nno-pty ssh-ed25519 " + saKey2 + " bob\n"}
	srv := map[string]string{"keys/alice.pub": "ssh-ed25519 " + saKey2 + " bob\n", "keys/opts.pub": "no-pty ssh-rsa " + saKey1 + " x\n"}
	cfg := []any{"user", "root", "config", "{dir}/ak"}
	kv := func(kv ...any) []any { return append(kv, cfg...) }
	calls := []salttest.Call{
		single("present new", "ssh_auth.present", false, kv("name", "AAAAB3NewKey", "comment", "new@x")...),
		single("present new test", "ssh_auth.present", true, kv("name", "AAAAB3NewKey", "comment", "new@x")...),
		single("present full line", "ssh_auth.present", false, kv("name", "command=\"x\" ssh-ed25519 AAAAC3New2 a comment here")...),
		single("present exists", "ssh_auth.present", false, kv("name", saKey1, "comment", "alice@host")...),
		single("present exists test", "ssh_auth.present", true, kv("name", saKey1, "comment", "alice@host")...),
		single("present update", "ssh_auth.present", false, kv("name", saKey1, "comment", "changed")...),
		single("present update test", "ssh_auth.present", true, kv("name", "ssh-rsa "+saKey1+" changed")...),
		single("present invalid", "ssh_auth.present", false, kv("name", "abc!")...),
		single("present no user", "ssh_auth.present", false, "name", saKey1, "user", "nobody-here", "config", "{dir}/ak"),
		single("present source", "ssh_auth.present", false, kv("name", "x", "source", "salt://keys/alice.pub")...),
		single("present source test", "ssh_auth.present", true, kv("name", "x", "source", "salt://keys/opts.pub")...),
		single("present source with options", "ssh_auth.present", false, kv("name", "x", "source", "salt://keys/opts.pub")...),
		single("present source missing", "ssh_auth.present", false, kv("name", "x", "source", "salt://keys/nope.pub")...),
		single("absent", "ssh_auth.absent", false, kv("name", saKey2)...),
		single("absent full line", "ssh_auth.absent", false, kv("name", "ssh-rsa "+saKey1+" alice@host")...),
		single("absent test", "ssh_auth.absent", true, kv("name", saKey2)...),
		single("absent missing", "ssh_auth.absent", false, kv("name", "AAAAnope")...),
		single("absent missing test", "ssh_auth.absent", true, kv("name", "AAAAnope")...),
		single("absent source", "ssh_auth.absent", false, kv("name", "x", "source", "salt://keys/alice.pub")...),
	}
	for i := range calls {
		calls[i].Files = ak
	}
	runStateSuite(t, salttest.Suite{Name: "ssh_auth", Calls: calls, Srv: srv, Grains: payloadLinuxGrains()})
}

// TestSysctlStateGolden compares sysctl.present with test=True (which
// only reads) with Salt 3006; the value checked is kernel.ostype
// ("Linux" on every Linux system).
func TestSysctlStateGolden(t *testing.T) {
	conf := map[string]string{"s.conf": "kernel.ostype = Linux\nvm.x = 1\n"}
	calls := []salttest.Call{
		single("test set", "sysctl.present", true, "name", "kernel.ostype", "value", "Linux", "config", "{dir}/s.conf"),
		single("test differs in config", "sysctl.present", true, "name", "kernel.ostype", "value", "BSD", "config", "{dir}/s.conf"),
		single("test not in config", "sysctl.present", true, "name", "kernel.ostype", "value", "BSD", "config", "{dir}/other.conf"),
		single("test not in config same", "sysctl.present", true, "name", "kernel.ostype", "value", "Linux", "config", "{dir}/other.conf"),
		single("test unknown key in config", "sysctl.present", true, "name", "vm.x", "value", "1", "config", "{dir}/s.conf"),
	}
	for i := range calls {
		calls[i].Files = conf
	}
	runStateSuite(t, salttest.Suite{Name: "sysctl_state", Calls: calls, Grains: payloadLinuxGrains()})
}
