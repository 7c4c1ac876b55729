package builtin_test

import "testing"

const (
	sshKey1 = "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7key1key1key1key1key1key1key1key1key1=="
	sshKey2 = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
	sshKey3 = "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBKey3Key3Key3Key="
)

var sshAK = map[string]string{"ak": "# managed\nssh-rsa " + sshKey1 + " alice@host\n\ncommand=\"/bin/true\",no-pty ssh-ed25519 " + sshKey2 + " bob comment words\nssh-rsa not-base64!! bad\ngarbage line\necdsa-sha2-nistp256 " + sshKey3}

// TestSSHGolden compares the ssh module's authorized keys and known hosts
// functions on temporary files (user root, absolute config paths) with
// Salt 3006 (testdata/golden/ssh.json).
func TestSSHGolden(t *testing.T) {
	ak := []any{"config", "{dir}/ak"}
	kh := map[string]string{"kh": "example.com ssh-ed25519 " + sshKey2 + "\n[other.example.com]:2222 ssh-rsa " + sshKey1 + "\n"}
	calls := []sCall{
		{name: "auth_keys", fun: "ssh.auth_keys", args: []any{"root"}, kwargs: ak, files: sshAK},
		{name: "auth_keys md5", fun: "ssh.auth_keys", args: []any{"root"}, kwargs: append([]any{"fingerprint_hash_type", "md5"}, ak...), files: sshAK},
		{name: "auth_keys list", fun: "ssh.auth_keys", args: []any{[]any{"root", "nobody-here"}}, kwargs: ak, files: sshAK},
		{name: "auth_keys missing file", fun: "ssh.auth_keys", args: []any{"root"}, kwargs: ak},
		{name: "auth_keys bad hash", fun: "ssh.auth_keys", args: []any{"root"}, kwargs: append([]any{"fingerprint_hash_type", "nope"}, ak...), files: sshAK},
		{name: "check_key exists", fun: "ssh.check_key", args: []any{"root", sshKey1, "rsa", "alice@host", []any{}}, kwargs: ak, files: sshAK},
		{name: "check_key update", fun: "ssh.check_key", args: []any{"root", sshKey1, "rsa", "other", []any{}}, kwargs: ak, files: sshAK},
		{name: "check_key add", fun: "ssh.check_key", args: []any{"root", "AAAAnew", "ed25519", "", nil}, kwargs: ak, files: sshAK},
		{name: "check_key bad enc", fun: "ssh.check_key", args: []any{"root", sshKey1, "foo", "", nil}, kwargs: ak, files: sshAK},
		{name: "set_auth_key new", fun: "ssh.set_auth_key", args: []any{"root", "AAAAB3NewKey"}, kwargs: append([]any{"comment", "new@key", "options", []any{"no-pty", "from=\"10.0.0.1\""}}, ak...), files: sshAK},
		{name: "set_auth_key new file", fun: "ssh.set_auth_key", args: []any{"root", "AAAAB3NewKey"}, kwargs: append([]any{"enc", "ecdsa"}, "config", "{dir}/sub/ak")},
		{name: "set_auth_key replace", fun: "ssh.set_auth_key", args: []any{"root", sshKey2}, kwargs: append([]any{"enc", "ed25519", "comment", "bob"}, ak...), files: sshAK},
		{name: "set_auth_key no change", fun: "ssh.set_auth_key", args: []any{"root", sshKey1}, kwargs: append([]any{"comment", "alice@host"}, ak...), files: sshAK},
		{name: "set_auth_key invalid", fun: "ssh.set_auth_key", args: []any{"root", "ssh-rsa AAAA"}, kwargs: ak, files: sshAK},
		{name: "set_auth_key not base64", fun: "ssh.set_auth_key", args: []any{"root", "abc!"}, kwargs: ak, files: sshAK},
		{name: "set_auth_key no user", fun: "ssh.set_auth_key", args: []any{"nobody-here", sshKey1}, kwargs: ak, files: sshAK},
		{name: "rm_auth_key", fun: "ssh.rm_auth_key", args: []any{"root", sshKey2}, kwargs: ak, files: sshAK},
		{name: "rm_auth_key absent", fun: "ssh.rm_auth_key", args: []any{"root", "AAAAnope"}, kwargs: ak, files: sshAK},
		{name: "get_known_host_entries", fun: "ssh.get_known_host_entries", args: []any{"root", "example.com"}, kwargs: []any{"config", "{dir}/kh"}, files: kh},
		{name: "get_known_host_entries port", fun: "ssh.get_known_host_entries", args: []any{"root", "other.example.com"}, kwargs: []any{"config", "{dir}/kh", "port", int64(2222)}, files: kh},
		{name: "get_known_host_entries none", fun: "ssh.get_known_host_entries", args: []any{"root", "nope.example.com"}, kwargs: []any{"config", "{dir}/kh"}, files: kh},
		{name: "check_known_host exists", fun: "ssh.check_known_host", kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey2, "config", "{dir}/kh"}, files: kh},
		{name: "check_known_host update", fun: "ssh.check_known_host", kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey1, "config", "{dir}/kh"}, files: kh},
		{name: "check_known_host add", fun: "ssh.check_known_host", kwargs: []any{"user", "root", "hostname", "new.example.com", "config", "{dir}/kh"}, files: kh},
		{name: "check_known_host no host", fun: "ssh.check_known_host", kwargs: []any{"user", "root"}},
		{name: "set_known_host exists", fun: "ssh.set_known_host", kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey2, "enc", "ssh-ed25519", "config", "{dir}/kh", "hash_known_hosts", false}, files: kh},
		{name: "set_known_host add", fun: "ssh.set_known_host", kwargs: []any{"user", "root", "hostname", "new.example.com", "key", sshKey3, "enc", "ecdsa-sha2-nistp256", "config", "{dir}/kh", "hash_known_hosts", false}, files: kh},
		{name: "set_known_host replace", fun: "ssh.set_known_host", kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey3, "enc", "ssh-ed25519", "config", "{dir}/kh", "hash_known_hosts", false}, files: kh},
		{name: "set_known_host port hash", fun: "ssh.set_known_host", kwargs: []any{"user", "root", "hostname", "x", "key", sshKey3, "port", int64(2222), "config", "{dir}/kh"}, files: kh},
		{name: "set_known_host port", fun: "ssh.set_known_host", kwargs: []any{"user", "root", "hostname", "p.example.com", "key", sshKey3, "enc", "ssh-rsa", "port", int64(2200), "config", "{dir}/kh", "hash_known_hosts", false}, files: kh},
		{name: "rm_known_host", fun: "ssh.rm_known_host", kwargs: []any{"user", "root", "hostname", "example.com", "config", "{dir}/kh"}, files: kh},
		{name: "rm_known_host missing file", fun: "ssh.rm_known_host", kwargs: []any{"user", "root", "hostname", "example.com", "config", "{dir}/nope"}},
		{name: "rm_known_host relative no user", fun: "ssh.rm_known_host", kwargs: []any{"hostname", "example.com", "config", "kh"}},
	}
	runSuite(t, sSuite{name: "ssh", calls: calls, grains: linuxGrains()})
}
