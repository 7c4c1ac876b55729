package builtin_test

import (
	"bytes"
	"crypto/ed25519"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

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
	calls := []salttest.Call{
		{Name: "auth_keys", Fun: "ssh.auth_keys", Args: []any{"root"}, Kwargs: ak, Files: sshAK},
		{Name: "auth_keys md5", Fun: "ssh.auth_keys", Args: []any{"root"}, Kwargs: append([]any{"fingerprint_hash_type", "md5"}, ak...), Files: sshAK},
		{Name: "auth_keys list", Fun: "ssh.auth_keys", Args: []any{[]any{"root", "nobody-here"}}, Kwargs: ak, Files: sshAK},
		{Name: "auth_keys missing file", Fun: "ssh.auth_keys", Args: []any{"root"}, Kwargs: ak},
		{Name: "auth_keys bad hash", Fun: "ssh.auth_keys", Args: []any{"root"}, Kwargs: append([]any{"fingerprint_hash_type", "nope"}, ak...), Files: sshAK},
		{Name: "check_key exists", Fun: "ssh.check_key", Args: []any{"root", sshKey1, "rsa", "alice@host", []any{}}, Kwargs: ak, Files: sshAK},
		{Name: "check_key update", Fun: "ssh.check_key", Args: []any{"root", sshKey1, "rsa", "other", []any{}}, Kwargs: ak, Files: sshAK},
		{Name: "check_key add", Fun: "ssh.check_key", Args: []any{"root", "AAAAnew", "ed25519", "", nil}, Kwargs: ak, Files: sshAK},
		{Name: "check_key bad enc", Fun: "ssh.check_key", Args: []any{"root", sshKey1, "foo", "", nil}, Kwargs: ak, Files: sshAK},
		{Name: "set_auth_key new", Fun: "ssh.set_auth_key", Args: []any{"root", "AAAAB3NewKey"}, Kwargs: append([]any{"comment", "new@key", "options", []any{"no-pty", "from=\"10.0.0.1\""}}, ak...), Files: sshAK},
		{Name: "set_auth_key new file", Fun: "ssh.set_auth_key", Args: []any{"root", "AAAAB3NewKey"}, Kwargs: append([]any{"enc", "ecdsa"}, "config", "{dir}/sub/ak")},
		{Name: "set_auth_key replace", Fun: "ssh.set_auth_key", Args: []any{"root", sshKey2}, Kwargs: append([]any{"enc", "ed25519", "comment", "bob"}, ak...), Files: sshAK},
		{Name: "set_auth_key no change", Fun: "ssh.set_auth_key", Args: []any{"root", sshKey1}, Kwargs: append([]any{"comment", "alice@host"}, ak...), Files: sshAK},
		{Name: "set_auth_key invalid", Fun: "ssh.set_auth_key", Args: []any{"root", "ssh-rsa AAAA"}, Kwargs: ak, Files: sshAK},
		{Name: "set_auth_key not base64", Fun: "ssh.set_auth_key", Args: []any{"root", "abc!"}, Kwargs: ak, Files: sshAK},
		{Name: "set_auth_key no user", Fun: "ssh.set_auth_key", Args: []any{"nobody-here", sshKey1}, Kwargs: ak, Files: sshAK},
		{Name: "rm_auth_key", Fun: "ssh.rm_auth_key", Args: []any{"root", sshKey2}, Kwargs: ak, Files: sshAK},
		{Name: "rm_auth_key absent", Fun: "ssh.rm_auth_key", Args: []any{"root", "AAAAnope"}, Kwargs: ak, Files: sshAK},
		{Name: "get_known_host_entries", Fun: "ssh.get_known_host_entries", Args: []any{"root", "example.com"}, Kwargs: []any{"config", "{dir}/kh"}, Files: kh},
		{Name: "get_known_host_entries port", Fun: "ssh.get_known_host_entries", Args: []any{"root", "other.example.com"}, Kwargs: []any{"config", "{dir}/kh", "port", int64(2222)}, Files: kh},
		{Name: "get_known_host_entries none", Fun: "ssh.get_known_host_entries", Args: []any{"root", "nope.example.com"}, Kwargs: []any{"config", "{dir}/kh"}, Files: kh},
		{Name: "check_known_host exists", Fun: "ssh.check_known_host", Kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey2, "config", "{dir}/kh"}, Files: kh},
		{Name: "check_known_host update", Fun: "ssh.check_known_host", Kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey1, "config", "{dir}/kh"}, Files: kh},
		{Name: "check_known_host add", Fun: "ssh.check_known_host", Kwargs: []any{"user", "root", "hostname", "new.example.com", "config", "{dir}/kh"}, Files: kh},
		{Name: "check_known_host no host", Fun: "ssh.check_known_host", Kwargs: []any{"user", "root"}},
		{Name: "set_known_host exists", Fun: "ssh.set_known_host", Kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey2, "enc", "ssh-ed25519", "config", "{dir}/kh", "hash_known_hosts", false}, Files: kh},
		{Name: "set_known_host add", Fun: "ssh.set_known_host", Kwargs: []any{"user", "root", "hostname", "new.example.com", "key", sshKey3, "enc", "ecdsa-sha2-nistp256", "config", "{dir}/kh", "hash_known_hosts", false}, Files: kh},
		{Name: "set_known_host replace", Fun: "ssh.set_known_host", Kwargs: []any{"user", "root", "hostname", "example.com", "key", sshKey3, "enc", "ssh-ed25519", "config", "{dir}/kh", "hash_known_hosts", false}, Files: kh},
		{Name: "set_known_host port hash", Fun: "ssh.set_known_host", Kwargs: []any{"user", "root", "hostname", "x", "key", sshKey3, "port", int64(2222), "config", "{dir}/kh"}, Files: kh},
		{Name: "set_known_host port", Fun: "ssh.set_known_host", Kwargs: []any{"user", "root", "hostname", "p.example.com", "key", sshKey3, "enc", "ssh-rsa", "port", int64(2200), "config", "{dir}/kh", "hash_known_hosts", false}, Files: kh},
		{Name: "rm_known_host", Fun: "ssh.rm_known_host", Kwargs: []any{"user", "root", "hostname", "example.com", "config", "{dir}/kh"}, Files: kh},
		{Name: "rm_known_host missing file", Fun: "ssh.rm_known_host", Kwargs: []any{"user", "root", "hostname", "example.com", "config", "{dir}/nope"}},
		{Name: "rm_known_host relative no user", Fun: "ssh.rm_known_host", Kwargs: []any{"hostname", "example.com", "config", "kh"}},
	}
	hk := map[string]string{"hk/ssh_host_rsa_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n",
		"hk/ssh_host_rsa_key.pub": "ssh-rsa " + sshKey1 + " root@h\n", "hk/ssh_host_ed25519_key-cert.pub": "ssh-ed25519-cert-v01@openssh.com AAAAC3 c\n\n",
		"hk/ssh_host_legacy_key": "SSH PRIVATE KEY FILE FORMAT 1.1\n\x01binary\n", "hk/sshd_config": "Port 22\n", "hk/ssh_host_x_key.pub/": ""}
	keys := map[string]string{"enc": "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nabc\n-----END RSA PRIVATE KEY-----\n",
		"plain": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n", "k.pub": "ssh-ed25519 " + sshKey2 + " me\n"}
	calls = append(calls,
		salttest.Call{Name: "host_keys", Fun: "ssh.host_keys", Kwargs: []any{"keydir", "{dir}/hk"}, Files: hk, Sorted: true},
		salttest.Call{Name: "host_keys public", Fun: "ssh.host_keys", Kwargs: []any{"keydir", "{dir}/hk", "private", false}, Files: hk, Sorted: true},
		salttest.Call{Name: "host_keys no certs", Fun: "ssh.host_keys", Kwargs: []any{"keydir", "{dir}/hk", "certs", false}, Files: hk, Sorted: true},
		salttest.Call{Name: "host_keys missing dir", Fun: "ssh.host_keys", Kwargs: []any{"keydir", "{dir}/nope"}},
		salttest.Call{Name: "user_keys", Fun: "ssh.user_keys", Kwargs: []any{"user", "root", "pubfile", "{dir}/k.pub", "prvfile", "{dir}/plain"}, Files: keys},
		salttest.Call{Name: "user_keys list", Fun: "ssh.user_keys", Kwargs: []any{"user", []any{"root", "nobody-here"}, "pubfile", "{dir}/k.pub", "prvfile", false}, Files: keys},
		salttest.Call{Name: "user_keys none", Fun: "ssh.user_keys", Kwargs: []any{"user", "root", "pubfile", "{dir}/nope.pub", "prvfile", false}, Files: keys},
		salttest.Call{Name: "key_is_encrypted", Fun: "ssh.key_is_encrypted", Args: []any{"{dir}/enc"}, Files: keys},
		salttest.Call{Name: "key_is_encrypted plain", Fun: "ssh.key_is_encrypted", Args: []any{"{dir}/plain"}, Files: keys},
		salttest.Call{Name: "key_is_encrypted public", Fun: "ssh.key_is_encrypted", Args: []any{"{dir}/k.pub"}, Files: keys},
		salttest.Call{Name: "key_is_encrypted missing", Fun: "ssh.key_is_encrypted", Args: []any{"{dir}/nope"}},
	)
	runSuite(t, salttest.Suite{Name: "ssh", Calls: calls, Grains: linuxGrains()})
}

// sshKeyscanServer serves SSH's key exchange on 127.0.0.1 with one fixed
// ed25519 host key (what ssh-keyscan reads) and closes every connection
// after it; it stops with the test. It returns the port.
func sshKeyscanServer(t *testing.T) int {
	t.Helper()
	signer, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true}
	cfg.AddHostKey(signer)
	ln := testutil.ServeTCP(t, func(conn net.Conn) {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if sc, chans, reqs, err := ssh.NewServerConn(conn, cfg); err == nil {
			go ssh.DiscardRequests(reqs)
			go func() {
				for ch := range chans {
					_ = ch.Reject(ssh.Prohibited, "no")
				}
			}()
			sc.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// TestSSHRecvKnownHostGolden runs ssh.recv_known_host_entries (real
// ssh-keyscan) against a local SSH server with a fixed host key, and
// compares with Salt 3006 (testdata/golden/ssh_recv.json): plain and
// hashed host names (the hash's random salt masked), an asked key type,
// md5 fingerprints, a key type the server lacks and a closed port (None).
func TestSSHRecvKnownHostGolden(t *testing.T) {
	if _, err := exec.LookPath("ssh-keyscan"); err != nil {
		t.Skip("no ssh-keyscan (openssh-client)")
	}
	port := sshKeyscanServer(t)
	closed := proc.FreePorts(t, 1)[0]
	p := strconv.Itoa(port)
	calls := []salttest.Call{
		{Name: "plain", Fun: "ssh.recv_known_host_entries", Args: []any{"127.0.0.1"}, Kwargs: []any{"port", port, "hash_known_hosts", false, "timeout", 3}},
		{Name: "hashed", Fun: "ssh.recv_known_host_entries", Args: []any{"127.0.0.1"}, Kwargs: []any{"port", p, "timeout", 3}},
		{Name: "enc md5", Fun: "ssh.recv_known_host_entries", Args: []any{"127.0.0.1"}, Kwargs: []any{"port", port, "enc", "ed25519", "hash_known_hosts", false, "fingerprint_hash_type", "md5"}},
		{Name: "enc missing", Fun: "ssh.recv_known_host_entries", Args: []any{"127.0.0.1"}, Kwargs: []any{"port", port, "enc", "rsa", "hash_known_hosts", false, "timeout", 2}},
		{Name: "closed port", Fun: "ssh.recv_known_host_entries", Args: []any{"127.0.0.1"}, Kwargs: []any{"port", closed, "timeout", 1}},
	}
	hashed := regexp.MustCompile(`^\|1\|[^|]+\|[^|]+$`)
	portRe := regexp.MustCompile(`\]:[0-9]+$`)
	mask := func(_ string, v any) any {
		l, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(l))
		for i, e := range l {
			m, ok := e.(*payload.Map)
			if !ok {
				out[i] = e
				continue
			}
			m = m.Clone()
			h := m.Str("hostname")
			h = portRe.ReplaceAllString(h, "]:{port}")
			if hashed.MatchString(h) {
				h = "|1|{salt}|{hash}"
			}
			m.Set("hostname", h)
			out[i] = m
		}
		return out
	}
	runSuite(t, salttest.Suite{Name: "ssh_recv", Calls: calls, Grains: linuxGrains(), Normalize: mask})
}
