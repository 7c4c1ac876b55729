package builtin

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestSSHKnownHostsStatesGolden compares ssh_known_hosts.present and
// absent with explicit keys (no network) on temporary known_hosts files
// with Salt 3006 (testdata/golden/ssh_known_hosts.json).
func TestSSHKnownHostsStatesGolden(t *testing.T) {
	kh := map[string]string{"kh": "example.com ssh-ed25519 " + saKey2 + "\n"}
	cfg := []any{"user", "root", "config", "{dir}/kh", "hash_known_hosts", false}
	calls := []salttest.Call{
		single("present exists", "ssh_known_hosts.present", false, append([]any{"name", "example.com", "key", saKey2, "enc", "ssh-ed25519"}, cfg...)...),
		single("present add", "ssh_known_hosts.present", false, append([]any{"name", "new.example.com", "key", saKey1, "enc", "ssh-rsa"}, cfg...)...),
		single("present add test", "ssh_known_hosts.present", true, "name", "new.example.com", "key", saKey1, "enc", "ssh-rsa", "user", "root", "config", "{dir}/kh"),
		single("present update", "ssh_known_hosts.present", false, append([]any{"name", "example.com", "key", saKey1, "enc", "ssh-ed25519"}, cfg...)...),
		single("present update test", "ssh_known_hosts.present", true, "name", "example.com", "key", saKey1, "enc", "ssh-ed25519", "user", "root", "config", "{dir}/kh"),
		single("present exists test", "ssh_known_hosts.present", true, "name", "example.com", "key", saKey2, "enc", "ssh-ed25519", "user", "root", "config", "{dir}/kh"),
		single("present test both", "ssh_known_hosts.present", true, "name", "x", "key", saKey2, "fingerprint", "aa", "user", "root", "config", "{dir}/kh"),
		single("present test no enc", "ssh_known_hosts.present", true, "name", "x", "key", saKey2, "user", "root", "config", "{dir}/kh"),
		single("present relative no user", "ssh_known_hosts.present", false, "name", "x", "config", "kh"),
		single("present port hash", "ssh_known_hosts.present", false, "name", "x", "key", saKey2, "enc", "ssh-rsa", "port", int64(2222), "user", "root", "config", "{dir}/kh"),
		single("absent", "ssh_known_hosts.absent", false, "name", "example.com", "user", "root", "config", "{dir}/kh"),
		single("absent test", "ssh_known_hosts.absent", true, "name", "example.com", "user", "root", "config", "{dir}/kh"),
		single("absent already", "ssh_known_hosts.absent", false, "name", "nope.example.com", "user", "root", "config", "{dir}/kh"),
	}
	for i := range calls {
		calls[i].Files = kh
	}
	runStateSuite(t, salttest.Suite{Name: "ssh_known_hosts", Calls: calls, Grains: payloadLinuxGrains()})
}
