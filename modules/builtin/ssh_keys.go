package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file holds the key-file readers of Salt's ssh module:
// ssh.host_keys, ssh.user_keys and ssh.key_is_encrypted.

func sshKeyFunctions() []modules.Function {
	return []modules.Function{
		{Name: "ssh.host_keys", Spec: modules.Spec{Params: []modules.Param{opt("keydir", nil), opt("private", true), opt("certs", true)}}, Fn: sshHostKeys,
			Doc: "Return the minion's host keys\n\nCLI Example:\n\n    salt '*' ssh.host_keys\n    salt '*' ssh.host_keys keydir=/etc/ssh\n    salt '*' ssh.host_keys keydir=/etc/ssh private=False\n    salt '*' ssh.host_keys keydir=/etc/ssh certs=False"},
		{Name: "ssh.user_keys", Spec: modules.Spec{Params: []modules.Param{opt("user", nil), opt("pubfile", nil), opt("prvfile", nil)}}, Fn: sshUserKeys,
			Doc: "Return the user's ssh keys on the minion\n\nCLI Example:\n\n    salt '*' ssh.user_keys\n    salt '*' ssh.user_keys user=user1\n    salt '*' ssh.user_keys user=user1 pubfile=/home/user1/.ssh/id_rsa.pub prvfile=/home/user1/.ssh/id_rsa\n    salt '*' ssh.user_keys user=user1 prvfile=False\n\nA file path of False keeps Salt from reading that key file."},
		{Name: "ssh.key_is_encrypted", Spec: modules.Spec{Params: []modules.Param{req("key")}}, Fn: sshKeyIsEncrypted,
			Doc: "Function to determine whether or not a private key is encrypted with a\npassphrase.\n\nChecks key for a ``Proc-Type`` header with ``ENCRYPTED`` in the value. If\nfound, returns ``True``, otherwise returns ``False``.\n\nCLI Example:\n\n    salt '*' ssh.key_is_encrypted /root/id_rsa"},
	}
}

var sshHostKeyRe = regexp.MustCompile(`^ssh_host_(.+)_key((-cert)?\.pub)?`)

// sshHostKeys is ssh.host_keys: {type[.pub|-cert.pub]: file text} for
// the ssh_host_*_key files of keydir (/etc/ssh on Linux).
func sshHostKeys(_ context.Context, c *modules.Call) (any, error) {
	keydir := ""
	if v := c.Args.Get("keydir"); payload.Truthy(v) {
		keydir = pyfmt.Str(v)
	} else if grainsData(c).Str("kernel") == "Linux" {
		keydir = "/etc/ssh"
	} else {
		return nil, fmt.Errorf("%w: ssh.host_keys: Please specify a keydir", modules.ErrInvocation)
	}
	ents, err := os.ReadDir(keydir)
	if err != nil {
		return nil, filePyError(err)
	}
	private, certs := c.Args.Get("private"), c.Args.Get("certs")
	keys := &payload.Map{}
	for _, e := range ents {
		m := sshHostKeyRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if m[2] == "" && private == false {
			continue
		}
		if m[3] != "" && certs == false {
			continue
		}
		b, err := os.ReadFile(filepath.Join(keydir, e.Name()))
		if err != nil {
			keys.Set(m[1]+m[2], "")
			continue
		}
		text := strings.ToValidUTF8(string(b), "\ufffd")
		// The legacy SSH1 binary format: only its first line is text.
		if first, _, ok := strings.Cut(text, "\n"); ok && first == "SSH PRIVATE KEY FILE FORMAT 1.1" {
			text = first
		}
		keys.Set(m[1]+m[2], strings.TrimSpace(text))
	}
	return keys, nil
}

// sshUserKeys is ssh.user_keys: the default (or given) public and private
// key files of each user's ~/.ssh, users without any left out.
func sshUserKeys(_ context.Context, c *modules.Call) (any, error) {
	var users []string
	switch u := c.Args.Get("user").(type) {
	case []any:
		for _, x := range u {
			users = append(users, pyfmt.Str(x))
		}
	default:
		if payload.Truthy(u) {
			users = []string{pyfmt.Str(u)}
		} else {
			all, err := readPasswd("")
			if err != nil {
				return nil, err
			}
			for _, e := range all {
				users = append(users, e.name)
			}
		}
	}
	files := func(arg string, defaults []string) []string {
		v := c.Args.Get(arg)
		switch {
		case payload.Truthy(v):
			return []string{pyfmt.Str(v)}
		case v == false:
			return nil
		}
		return defaults
	}
	names := append(files("pubfile", []string{"id_rsa.pub", "id_dsa.pub", "id_ecdsa.pub", "id_ed25519.pub"}),
		files("prvfile", []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"})...)
	ret := &payload.Map{}
	for _, u := range users {
		e, ok := userLookup(u, "")
		if !ok {
			continue
		}
		keys := &payload.Map{}
		for _, k := range names {
			name, p := k, e.home+"/.ssh/"+k
			if strings.HasPrefix(k, "/") {
				name, p = filepath.Base(k), k
			}
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			keys.Set(name, strings.TrimSpace(strings.ToValidUTF8(string(b), "\ufffd")))
		}
		if keys.Len() > 0 {
			ret.Set(u, keys)
		}
	}
	return ret, nil
}

var sshPrivateKeyRe = regexp.MustCompile(`BEGIN (?:\w+\s)*PRIVATE KEY`)

// sshKeyIsEncrypted is ssh.key_is_encrypted.
func sshKeyIsEncrypted(_ context.Context, c *modules.Call) (any, error) {
	key := c.Args.Str("key")
	b, err := os.ReadFile(key)
	if err != nil {
		return nil, sshReadError(err, key)
	}
	data := string(b)
	if !sshPrivateKeyRe.MatchString(data) {
		return nil, fmt.Errorf("%w: %s is not a private key", modules.ErrExecution, key)
	}
	return strings.Contains(data, "ENCRYPTED"), nil
}

// sshReadError is salt.utils.files.process_read_exception's text.
func sshReadError(err error, p string) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist", modules.ErrExecution, p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: Permission denied reading from %s", modules.ErrExecution, p)
	case errors.As(err, &errno):
		return fmt.Errorf("%w: Error %d encountered reading from %s: %s", modules.ErrExecution, int(errno), p, cmdStrerror(errno))
	}
	return fmt.Errorf("%w: %v", modules.ErrExecution, err)
}
