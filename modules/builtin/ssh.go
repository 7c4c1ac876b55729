package builtin

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyhash"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxKeyFile bounds an authorized_keys or known_hosts file.
const maxKeyFile = 16 << 20

// sshFunctions is Salt's ssh module (salt/modules/ssh.py): authorized keys
// and known hosts of users.
func sshFunctions() []modules.Function {
	cfg := opt("config", ".ssh/authorized_keys")
	fht := opt("fingerprint_hash_type", nil)
	return []modules.Function{
		{Name: "ssh.auth_keys", Spec: modules.Spec{Params: []modules.Param{opt("user", nil), cfg, fht}},
			Doc: "Return the authorized keys for users\n\nCLI Example:\n\n    salt '*' ssh.auth_keys\n    salt '*' ssh.auth_keys root\n    salt '*' ssh.auth_keys user=root\n    salt '*' ssh.auth_keys user=\"[user1, user2]\"",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return sshAuthKeys(c, c.Args.Get("user"), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
			}},
		{Name: "ssh.check_key", Spec: modules.Spec{Params: []modules.Param{req("user"), req("key"), req("enc"), req("comment"), req("options"), cfg, opt("cache_keys", nil), fht}},
			Doc: "Check to see if a key needs updating, returns \"update\", \"add\" or \"exists\"\n\nCLI Example:\n\n    salt '*' ssh.check_key <user> <key> <enc> <comment> <options>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return sshCheckKey(c, c.Args.Str("user"), c.Args.Str("key"), c.Args.Str("enc"), c.Args.Get("comment"), c.Args.Get("options"), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
			}},
		{Name: "ssh.set_auth_key", Spec: modules.Spec{Params: []modules.Param{req("user"), req("key"), opt("enc", "ssh-rsa"), opt("comment", ""), opt("options", nil), cfg, opt("cache_keys", nil), fht}},
			Doc: "Add a key to the authorized_keys file. The \"key\" parameter must only be the\nstring of text that is the encoded key. If the key begins with \"ssh-rsa\"\nor ends with user@host, remove those from the key before passing it to this\nfunction.\n\nCLI Example:\n\n    salt '*' ssh.set_auth_key <user> '<key>' enc='dsa'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return sshSetAuthKey(c, c.Args.Str("user"), c.Args.Str("key"), c.Args.Str("enc"), c.Args.Get("comment"), c.Args.Get("options"), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
			}},
		{Name: "ssh.rm_auth_key", Spec: modules.Spec{Params: []modules.Param{req("user"), req("key"), cfg, fht}},
			Doc: "Remove an authorized key from the specified user's authorized key file\n\nCLI Example:\n\n    salt '*' ssh.rm_auth_key <user> <key>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return sshRmAuthKey(c, c.Args.Str("user"), c.Args.Str("key"), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
			}},
		{Name: "ssh.set_auth_key_from_file", Spec: modules.Spec{Params: []modules.Param{req("user"), req("source"), cfg, opt("saltenv", "base"), fht}},
			Doc: "Add a key to the authorized_keys file, using a file as the source.\n\nCLI Example:\n\n    salt '*' ssh.set_auth_key_from_file <user> salt://ssh_keys/<user>.id_rsa.pub",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return sshFromFile(ctx, c, true) }},
		{Name: "ssh.rm_auth_key_from_file", Spec: modules.Spec{Params: []modules.Param{req("user"), req("source"), cfg, opt("saltenv", "base"), fht}},
			Doc: "Remove an authorized key from the specified user's authorized key file,\nusing a file as source\n\nCLI Example:\n\n    salt '*' ssh.rm_auth_key_from_file <user> salt://ssh_keys/<user>.id_rsa.pub",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return sshFromFile(ctx, c, false) }},
		{Name: "ssh.check_key_file", Spec: modules.Spec{Params: []modules.Param{req("user"), req("source"), cfg, opt("saltenv", "base"), fht}},
			Doc: "Check a keyfile from a source destination against the local keys and\nreturn the keys to change\n\nCLI Example:\n\n    salt '*' ssh.check_key_file root salt://ssh/keyfile",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				keys, err := sshSourceKeys(ctx, c)
				if err != nil || keys == nil || keys.Len() == 0 {
					return &payload.Map{}, nil
				}
				ret := &payload.Map{}
				for _, it := range keys.Items() {
					k := it.Value.(*payload.Map)
					st, err := sshCheckKey(c, c.Args.Str("user"), payload.KeyString(it.Key), k.Str("enc"), k.Str("comment"), k.List("options"), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
					if err != nil {
						return nil, err
					}
					ret.SetKey(it.Key, st)
				}
				return ret, nil
			}},
		{Name: "ssh.get_known_host_entries", Spec: modules.Spec{Params: []modules.Param{req("user"), req("hostname"), opt("config", nil), opt("port", nil), fht}},
			Doc: "Return information about known host entries from the configfile, if any.\nIf there are no entries for a matching hostname, return None.\n\nCLI Example:\n\n    salt '*' ssh.get_known_host_entries <user> <hostname>",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return sshKnownHostEntries(ctx, c, c.Args.Get("user"), c.Args.Str("hostname"), c.Args.Get("config"), c.Args.Get("port"), c.Args.Get("fingerprint_hash_type"))
			}},
		{Name: "ssh.recv_known_host_entries", Spec: modules.Spec{Params: []modules.Param{req("hostname"), opt("enc", nil), opt("port", nil), opt("hash_known_hosts", true), opt("timeout", int64(5)), fht}},
			Doc: "Return information about known host entries from the remote server.\n\nhostname\n    The name of the remote host (e.g. \"github.com\")\n\nenc\n    Defines what type of key is being used, can be ed25519, ecdsa,\n    ssh-rsa, ssh-dss or any other type as of openssh server version 8.7.\n\nport\n    Optional parameter, denoting the port of the remote host on which an\n    SSH daemon is running. By default the port 22 is used.\n\nhash_known_hosts : True\n    Hash all hostnames and addresses in the known hosts file.\n\ntimeout : int\n    Set the timeout for connection attempts.  Default is 5 seconds.\n\nfingerprint_hash_type\n    The fingerprint hash type that the public key fingerprints were\n    originally hashed with. This defaults to ``sha256`` if not specified.\n\nCLI Example:\n\n    salt '*' ssh.recv_known_host_entries <hostname> enc=<enc> port=<port>",
			Fn:  sshRecvKnownHostEntries},
		{Name: "ssh.check_known_host", Spec: modules.Spec{Params: []modules.Param{opt("user", nil), opt("hostname", nil), opt("key", nil), opt("fingerprint", nil), opt("config", nil), opt("port", nil), fht}},
			Doc: "Check the record in known_hosts file, either by its value or by fingerprint\n(it's enough to set up either key or fingerprint, you don't need to set up\nboth).\n\nIf provided key or fingerprint doesn't match with stored value, return\n\"update\", if no value is found for a given host, return \"add\", otherwise\nreturn \"exists\".\n\nCLI Example:\n\n    salt '*' ssh.check_known_host <user> <hostname> key='AAAA...FAaQ=='",
			Fn:  sshCheckKnownHost},
		{Name: "ssh.rm_known_host", Spec: modules.Spec{Params: []modules.Param{opt("user", nil), opt("hostname", nil), opt("config", nil), opt("port", nil)}},
			Doc: "Remove all keys belonging to hostname from a known_hosts file.\n\nCLI Example:\n\n    salt '*' ssh.rm_known_host <user> <hostname>",
			Fn:  sshRmKnownHost},
		{Name: "ssh.set_known_host", Spec: modules.Spec{Params: []modules.Param{opt("user", nil), opt("hostname", nil), opt("fingerprint", nil), opt("key", nil), opt("port", nil),
			opt("enc", nil), opt("config", nil), opt("hash_known_hosts", true), opt("timeout", int64(5)), fht}},
			Doc: "Download SSH public key from remote host \"hostname\", optionally validate\nits fingerprint against \"fingerprint\" variable and save the record in the\nknown_hosts file.\n\nIf such a record does already exists in there, do nothing.\n\nCLI Example:\n\n    salt '*' ssh.set_known_host <user> fingerprint='xx:xx:..:xx' enc='ssh-rsa' config='.ssh/known_hosts'",
			Fn:  sshSetKnownHost},
		{Name: "ssh.hash_known_hosts", Spec: modules.Spec{Params: []modules.Param{opt("user", nil), opt("config", nil)}},
			Doc: "Hash all the hostnames in the known hosts file.\n\nCLI Example:\n\n    salt '*' ssh.hash_known_hosts",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return sshHashKnownHosts(ctx, c, c.Args.Get("user"), c.Args.Get("config"))
			}},
	}
}

// sshRefineEnc is _refine_enc.
func sshRefineEnc(enc string) (string, error) {
	switch enc {
	case "r", "rsa", "ssh-rsa":
		return "ssh-rsa", nil
	case "d", "dsa", "dss", "ssh-dss":
		return "ssh-dss", nil
	case "e", "ecdsa":
		return "ecdsa-sha2-nistp256", nil
	case "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp256":
		return enc, nil
	case "ed25519", "ssh-ed25519":
		return "ssh-ed25519", nil
	case "rsa-sha2-512", "rsa-sha2-256", "rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com", "ssh-rsa-cert-v01@openssh.com",
		"ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
		"sk-ecdsa-sha2-nistp256@openssh.com", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "ssh-ed25519-cert-v01@openssh.com",
		"sk-ssh-ed25519@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com":
		return enc, nil
	}
	return "", fmt.Errorf("%w: Incorrect encryption key type '%s'.", modules.ErrExecution, enc)
}

// sshOptions is the options argument as a list (None is empty).
func sshOptions(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, o := range x {
			out = append(out, pyfmt.Str(o))
		}
	case string:
		// A string joins its characters, as Python's ",".join does.
		for _, r := range x {
			out = append(out, string(r))
		}
	}
	return out
}

// sshFormatLine is _format_auth_line.
func sshFormatLine(key, enc string, comment any, options []string) string {
	line := ""
	if len(options) > 0 {
		line += strings.Join(options, ",") + " "
	}
	return line + fmt.Sprintf("%s %s %s\n", enc, key, pyfmt.Str(comment))
}

// sshExpandPath is _expand_authorized_keys_path.
func sshExpandPath(p, user, home string) (string, error) {
	var out strings.Builder
	esc := false
	for _, r := range p {
		if esc {
			esc = false
			switch r {
			case '%':
				out.WriteRune('%')
			case 'u':
				out.WriteString(user)
			case 'h':
				out.WriteString(home)
			default:
				return "", fmt.Errorf("%w: AuthorizedKeysFile path: unknown token character \"%%%c\"", modules.ErrExecution, r)
			}
			continue
		}
		if r == '%' {
			esc = true
			continue
		}
		out.WriteRune(r)
	}
	if esc {
		return "", fmt.Errorf("%w: AuthorizedKeysFile path: Last character can't be escape character", modules.ErrExecution)
	}
	return out.String(), nil
}

// sshConfigFile is _get_config_file.
func sshConfigFile(user, config string) (string, passwdEntry, error) {
	e, ok := userLookup(user, "")
	if !ok {
		return "", e, fmt.Errorf("%w: User '%s' does not exist", modules.ErrExecution, user)
	}
	p, err := sshExpandPath(config, user, e.home)
	if err != nil {
		return "", e, err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.home, p)
	}
	return p, e, nil
}

// sshFingerprint is _fingerprint: "" for a key that is not base64.
func sshFingerprint(key string, hashType any) (string, error) {
	ht := "sha256"
	if payload.Truthy(hashType) {
		ht = strings.ToLower(pyfmt.Str(hashType))
	}
	h, ok := pyhash.NewCommon(ht)
	if !ok {
		return "", fmt.Errorf("%w: The fingerprint_hash_type %s is not supported.", modules.ErrExecution, ht)
	}
	raw, ok := pyB64Decode(key)
	if !ok {
		return "", nil
	}
	h.Write(raw)
	hx := hex.EncodeToString(h.Sum(nil))
	parts := make([]string, 0, len(hx)/2)
	for i := 0; i+1 < len(hx); i += 2 {
		parts = append(parts, hx[i:i+2])
	}
	return strings.Join(parts, ":"), nil
}

var sshLineRe = regexp.MustCompile(`^(.*?)\s?((?:sk-)?(?:ssh\-|ecds)[\w@.-]+\s.+)$`)

// sshValidateKeys is _validate_keys.
func sshValidateKeys(file string, hashType any) (*payload.Map, error) {
	ret := &payload.Map{}
	b, err := readBounded(file, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: Problem reading ssh key file %s", modules.ErrExecution, file)
	}
	for _, line := range py.FileLines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sshLineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		comps := strings.Fields(m[2])
		if len(comps) < 2 {
			continue
		}
		options := []any{}
		if m[1] != "" {
			for _, o := range strings.Split(m[1], ",") {
				options = append(options, o)
			}
		}
		fp, err := sshFingerprint(comps[1], hashType)
		if err != nil {
			return nil, err
		}
		if fp == "" {
			continue
		}
		ret.Set(comps[1], payload.NewMap("enc", comps[0], "comment", strings.Join(comps[2:], " "), "options", options, "fingerprint", fp))
	}
	return ret, nil
}

func sshAuthKeys(c *modules.Call, userV any, config string, hashType any) (any, error) {
	var users []string
	single := false
	switch u := userV.(type) {
	case nil, string:
		if !payload.Truthy(userV) {
			all, _ := readPasswd("")
			for _, e := range all {
				users = append(users, e.name)
			}
			sort.Strings(users)
		} else {
			users, single = []string{u.(string)}, true
		}
	case []any:
		for _, x := range u {
			users = append(users, pyfmt.Str(x))
		}
	default:
		users, single = []string{pyfmt.Str(u)}, true
	}
	keys := &payload.Map{}
	for _, u := range users {
		full, _, err := sshConfigFile(u, config)
		if err != nil {
			continue
		}
		if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
			k, err := sshValidateKeys(full, hashType)
			if err != nil {
				return nil, err
			}
			keys.Set(u, k)
		}
	}
	if single {
		if v, ok := keys.Get(users[0]); ok {
			return v, nil
		}
		return &payload.Map{}, nil
	}
	return keys, nil
}

func sshCheckKey(c *modules.Call, user, key, enc string, comment, options any, config string, hashType any) (string, error) {
	enc, err := sshRefineEnc(enc)
	if err != nil {
		return "", err
	}
	cur, err := sshAuthKeys(c, user, config, hashType)
	if err != nil {
		return "", err
	}
	current := cur.(*payload.Map)
	nline := sshFormatLine(key, enc, comment, sshOptions(options))
	v, ok := current.Get(key)
	if !ok {
		return "add", nil
	}
	k := v.(*payload.Map)
	if sshFormatLine(key, k.Str("enc"), k.Str("comment"), sshOptions(k.List("options"))) != nline {
		return "update", nil
	}
	return "exists", nil
}

var sshReplaceRe = regexp.MustCompile(`((.*)\s)?((?:sk-)?(?:ssh|ecdsa)-[a-z0-9@.-]+)\s([a-zA-Z0-9+/]+={0,2})(\s(.*))?`)

func sshSetAuthKey(c *modules.Call, user, key, encArg string, comment, options any, config string, hashType any) (any, error) {
	if len(strings.Fields(key)) > 1 {
		return "invalid", nil
	}
	enc, err := sshRefineEnc(encArg)
	if err != nil {
		return nil, err
	}
	uinfo, ok := userLookup(user, "")
	if !ok {
		return "fail", nil
	}
	fp, err := sshFingerprint(key, hashType)
	if err != nil {
		return nil, err
	}
	if fp == "" {
		return "Invalid public key", nil
	}
	status, err := sshCheckKey(c, user, key, enc, comment, options, config, hashType)
	if err != nil {
		return nil, err
	}
	full, _, err := sshConfigFile(user, config)
	if err != nil {
		return nil, err
	}
	switch status {
	case "update":
		auth := sshFormatLine(key, enc, comment, sshOptions(options))
		b, err := readBounded(full, maxKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: Problem reading or writing to key file: %w", modules.ErrExecution, err)
		}
		var lines []string
		for _, line := range py.FileLines(string(b)) {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			line += "\n"
			if strings.HasPrefix(line, "#") {
				lines = append(lines, line)
				continue
			}
			m := sshReplaceRe.FindStringSubmatch(line)
			if m != nil && m[4] == key {
				lines = append(lines, auth)
			} else {
				lines = append(lines, line)
			}
		}
		if err := os.WriteFile(full, []byte(strings.Join(lines, "")), 0o600); err != nil {
			return nil, fmt.Errorf("%w: Problem reading or writing to key file: %w", modules.ErrExecution, err)
		}
		return "replace", nil
	case "exists":
		return "no change", nil
	}
	auth := sshFormatLine(key, enc, comment, sshOptions(options))
	if strings.HasPrefix(full, uinfo.home) {
		if st, err := os.Stat(uinfo.home); err != nil || !st.IsDir() {
			return "fail", nil
		}
	}
	dir := filepath.Dir(full)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		if os.Geteuid() == 0 {
			_ = os.Chown(dir, int(uinfo.uid), int(uinfo.gid))
		}
		_ = os.Chmod(dir, 0o700)
	}
	existing, err := os.ReadFile(full)
	newFile := err != nil
	f, err := os.OpenFile(full, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: Could not write to key file: %w", modules.ErrExecution, err)
	}
	if !newFile && len(existing) > 0 && existing[len(existing)-1] != '\n' {
		_, _ = f.WriteString("\n")
	}
	_, werr := f.WriteString(auth)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("%w: Could not write to key file: %w", modules.ErrExecution, werr)
	}
	if newFile {
		if os.Geteuid() == 0 {
			_ = os.Chown(full, int(uinfo.uid), int(uinfo.gid))
		}
		_ = os.Chmod(full, 0o600)
	}
	return "new", nil
}

func sshRmAuthKey(c *modules.Call, user, key, config string, hashType any) (any, error) {
	cur, err := sshAuthKeys(c, user, config, hashType)
	if err != nil {
		return nil, err
	}
	if !cur.(*payload.Map).Has(key) {
		return "Key not present", nil
	}
	full, _, err := sshConfigFile(user, config)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(full); err != nil || !st.Mode().IsRegular() {
		return fmt.Sprintf("Authorized keys file %s not present", full), nil
	}
	b, err := readBounded(full, maxKeyFile)
	if err != nil {
		c.Log().Warn(fmt.Sprintf("Could not read/write key file: %v", err))
		return "Key not removed", nil
	}
	var lines []string
	for _, line := range py.FileLines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line += "\n"
		if strings.HasPrefix(line, "#") {
			lines = append(lines, line)
			continue
		}
		m := sshLineRe.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			continue
		}
		comps := strings.Fields(m[2])
		if len(comps) < 2 {
			lines = append(lines, line)
			continue
		}
		if comps[1] == key {
			continue
		}
		lines = append(lines, line)
	}
	st, _ := os.Stat(full)
	if err := os.WriteFile(full, []byte(strings.Join(lines, "")), st.Mode().Perm()); err != nil {
		c.Log().Warn(fmt.Sprintf("Could not read/write key file: %v", err))
		return "Key not removed", nil
	}
	return "Key removed", nil
}

// sshSourceKeys caches source and validates its keys (nil when the file
// cannot be fetched).
func sshSourceKeys(ctx context.Context, c *modules.Call) (*payload.Map, error) {
	fc, err := cpClient(c)
	if err != nil {
		return nil, err
	}
	local, err := fc.CacheFile(ctx, c.Args.Str("source"), c.Args.Str("saltenv"))
	if err != nil || local == "" {
		return nil, nil
	}
	return sshValidateKeys(local, c.Args.Get("fingerprint_hash_type"))
}

func sshFromFile(ctx context.Context, c *modules.Call, set bool) (any, error) {
	keys, err := sshSourceKeys(ctx, c)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		return nil, fmt.Errorf("%w: Failed to pull key file from salt file server", modules.ErrExecution)
	}
	if keys.Len() == 0 {
		c.Log().Error(fmt.Sprintf("No keys detected in %s. Is file properly formatted?", c.Args.Str("source")))
		return "fail", nil
	}
	var rval strings.Builder
	for _, it := range keys.Items() {
		k := it.Value.(*payload.Map)
		var r any
		if set {
			r, err = sshSetAuthKey(c, c.Args.Str("user"), payload.KeyString(it.Key), k.Str("enc"), k.Str("comment"), k.List("options"), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
		} else {
			r, err = sshRmAuthKey(c, c.Args.Str("user"), payload.KeyString(it.Key), c.Args.Str("config"), c.Args.Get("fingerprint_hash_type"))
		}
		if err != nil {
			return nil, err
		}
		rval.WriteString(payload.Text(r))
	}
	s := rval.String()
	if set {
		for _, w := range []string{"fail", "replace", "new"} {
			if strings.Contains(s, w) {
				return w, nil
			}
		}
		return "no change", nil
	}
	switch {
	case strings.Contains(s, "Key not removed"):
		return "Key not removed", nil
	case strings.Contains(s, "Key removed"):
		return "Key removed", nil
	}
	return "Key not present", nil
}

// sshKnownHostsFile is _get_known_hosts_file: the path, or the error map.
func sshKnownHostsFile(user, config any) (string, *payload.Map) {
	cfg := ""
	if payload.Truthy(config) {
		cfg = pyfmt.Str(config)
	}
	if payload.Truthy(user) {
		if cfg == "" {
			cfg = ".ssh/known_hosts"
		}
	} else if cfg == "" {
		cfg = "/etc/ssh/ssh_known_hosts"
	}
	if filepath.IsAbs(cfg) {
		return cfg, nil
	}
	if payload.Truthy(user) {
		e, ok := userLookup(pyfmt.Str(user), "")
		if !ok {
			return "", payload.NewMap("status", "error", "error", fmt.Sprintf("User %s does not exist", pyfmt.Str(user)))
		}
		return filepath.Join(e.home, cfg), nil
	}
	return "", payload.NewMap("status", "error", "error", "Cannot determine absolute path to file.")
}

// sshHostPort is _hostname_and_port_to_ssh_hostname.
func sshHostPort(host string, port any) string {
	if !payload.Truthy(port) || pyfmt.Str(port) == "22" {
		return host
	}
	return fmt.Sprintf("[%s]:%s", host, pyfmt.Str(port))
}

// sshParseOpenSSH is _parse_openssh_output.
func sshParseOpenSSH(lines []string, hashType any) ([]any, error) {
	var out []any
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		fp, err := sshFingerprint(f[2], hashType)
		if err != nil {
			return nil, err
		}
		if fp == "" {
			continue
		}
		out = append(out, payload.NewMap("hostname", f[0], "key", f[2], "enc", f[1], "fingerprint", fp))
	}
	return out, nil
}

func sshKeygen(ctx context.Context, args ...string) (string, error) {
	if _, err := which("ssh-keygen"); err != nil {
		return "", fmt.Errorf("%w: ssh-keygen", modules.ErrCommandNotFound)
	}
	res, err := pkgRun(ctx, append([]string{"ssh-keygen"}, args...), pkgRunOpts{combined: true})
	if err != nil {
		return "", err
	}
	return res.stdout, nil
}

func sshKnownHostEntries(ctx context.Context, c *modules.Call, user any, host string, config, port, hashType any) (any, error) {
	full, errMap := sshKnownHostsFile(user, config)
	if errMap != nil {
		return errMap, nil
	}
	out, err := sshKeygen(ctx, "-F", sshHostPort(host, port), "-f", full)
	if err != nil {
		return nil, err
	}
	entries, err := sshParseOpenSSH(py.SplitLines(out, false), hashType)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	return entries, nil
}

func sshEntryField(entries any, field string) []string {
	var out []string
	l, _ := entries.([]any)
	for _, e := range l {
		if m, ok := e.(*payload.Map); ok {
			out = append(out, m.Str(field))
		}
	}
	return out
}

func sshCheckKnownHost(ctx context.Context, c *modules.Call) (any, error) {
	host := c.Args.Get("hostname")
	if !payload.Truthy(host) {
		return payload.NewMap("status", "error", "error", "hostname argument required"), nil
	}
	config := c.Args.Get("config")
	if !payload.Truthy(config) {
		if payload.Truthy(c.Args.Get("user")) {
			config = ".ssh/known_hosts"
		} else {
			config = "/etc/ssh/ssh_known_hosts"
		}
	}
	entries, err := sshKnownHostEntries(ctx, c, c.Args.Get("user"), pyfmt.Str(host), config, c.Args.Get("port"), c.Args.Get("fingerprint_hash_type"))
	if err != nil {
		return nil, err
	}
	if l, ok := entries.([]any); !ok || len(l) == 0 {
		return "add", nil
	}
	if key := c.Args.Get("key"); payload.Truthy(key) {
		if containsStr(sshEntryField(entries, "key"), pyfmt.Str(key)) {
			return "exists", nil
		}
		return "update", nil
	}
	if fp := c.Args.Get("fingerprint"); payload.Truthy(fp) {
		if containsStr(sshEntryField(entries, "fingerprint"), pyfmt.Str(fp)) {
			return "exists", nil
		}
		return "update", nil
	}
	return "exists", nil
}

func sshRmKnownHost(ctx context.Context, c *modules.Call) (any, error) {
	host := c.Args.Get("hostname")
	if !payload.Truthy(host) {
		return payload.NewMap("status", "error", "error", "hostname argument required"), nil
	}
	full, errMap := sshKnownHostsFile(c.Args.Get("user"), c.Args.Get("config"))
	if errMap != nil {
		return errMap, nil
	}
	if st, err := os.Stat(full); err != nil || !st.Mode().IsRegular() {
		return payload.NewMap("status", "error", "error", fmt.Sprintf("Known hosts file %s does not exist", full)), nil
	}
	out, err := sshKeygen(ctx, "-R", sshHostPort(pyfmt.Str(host), c.Args.Get("port")), "-f", full)
	if err != nil {
		return nil, err
	}
	sshChownUser(c.Args.Get("user"), full)
	return payload.NewMap("status", "removed", "comment", out), nil
}

func sshChownUser(user any, p string) {
	if os.Geteuid() != 0 || !payload.Truthy(user) {
		return
	}
	if e, ok := userLookup(pyfmt.Str(user), ""); ok {
		_ = os.Chown(p, int(e.uid), int(e.gid))
	}
}

func sshHashKnownHosts(ctx context.Context, c *modules.Call, user, config any) (any, error) {
	full, errMap := sshKnownHostsFile(user, config)
	if errMap != nil {
		return errMap, nil
	}
	st, err := os.Stat(full)
	if err != nil || !st.Mode().IsRegular() {
		return payload.NewMap("status", "error", "error", fmt.Sprintf("Known hosts file %s does not exist", full)), nil
	}
	out, err := sshKeygen(ctx, "-H", "-f", full)
	if err != nil {
		return nil, err
	}
	_ = os.Chmod(full, st.Mode().Perm())
	sshChownUser(user, full)
	return payload.NewMap("status", "updated", "comment", out), nil
}

func sshSetKnownHost(ctx context.Context, c *modules.Call) (any, error) {
	hostV := c.Args.Get("hostname")
	if !payload.Truthy(hostV) {
		return payload.NewMap("status", "error", "error", "hostname argument required"), nil
	}
	host, user, port := pyfmt.Str(hostV), c.Args.Get("user"), c.Args.Get("port")
	hashHosts := payload.Truthy(c.Args.Get("hash_known_hosts"))
	if port != nil && pyfmt.Str(port) != "22" && hashHosts {
		return payload.NewMap("status", "error", "error", "argument port can not be used in conjunction with argument hash_known_hosts"), nil
	}
	key, fp, enc := c.Args.Get("key"), c.Args.Get("fingerprint"), c.Args.Get("enc")
	hashType := c.Args.Get("fingerprint_hash_type")
	stored, err := sshKnownHostEntries(ctx, c, user, host, c.Args.Get("config"), port, hashType)
	if err != nil {
		return nil, err
	}
	if m, ok := stored.(*payload.Map); ok {
		// The known hosts file cannot be found: Salt goes on with an
		// error map as entries and fails below.
		return m, nil
	}
	storedKeys, storedFps := sshEntryField(stored, "key"), sshEntryField(stored, "fingerprint")
	update, check := false, false
	switch {
	case stored == nil:
		update = true
	case payload.Truthy(fp) && !containsStr(storedFps, pyfmt.Str(fp)):
		update = true
	case payload.Truthy(key) && !containsStr(storedKeys, pyfmt.Str(key)):
		update = true
	case key == nil && fp == nil:
		check = true
	}
	storedList := func() any {
		l := make([]any, 0, len(storedKeys))
		for _, k := range storedKeys {
			l = append(l, k)
		}
		return l
	}
	if !update && !check {
		return payload.NewMap("status", "exists", "keys", storedList()), nil
	}
	var remote []any
	if !payload.Truthy(key) {
		if _, err := which("ssh-keyscan"); err != nil {
			return nil, fmt.Errorf("%w: ssh-keyscan", modules.ErrCommandNotFound)
		}
		timeout, _ := c.Args.Int("timeout")
		cmd := []string{"ssh-keyscan"}
		if payload.Truthy(port) {
			cmd = append(cmd, "-p", pyfmt.Str(port))
		}
		if payload.Truthy(enc) {
			cmd = append(cmd, "-t", pyfmt.Str(enc))
		}
		if hashHosts {
			cmd = append(cmd, "-H")
		}
		cmd = append(cmd, "-T", strconv.FormatInt(timeout, 10), host)
		for attempt := 0; attempt < 5 && len(remote) == 0; attempt++ {
			res, err := pkgRun(ctx, cmd, pkgRunOpts{combined: true})
			if err != nil {
				return nil, err
			}
			if remote, err = sshParseOpenSSH(py.SplitLines(res.stdout, false), hashType); err != nil {
				return nil, err
			}
		}
		if len(remote) == 0 {
			return payload.NewMap("status", "error", "error", "Unable to receive remote host keys"), nil
		}
		if payload.Truthy(fp) && !containsStr(sshEntryField(remote, "fingerprint"), pyfmt.Str(fp)) {
			return payload.NewMap("status", "error", "error", "Remote host public keys found but none of their fingerprints match the one you have provided"), nil
		}
		if check {
			for _, k := range sshEntryField(remote, "key") {
				if containsStr(storedKeys, k) {
					return payload.NewMap("status", "exists", "keys", storedList()), nil
				}
			}
		}
	}
	full, errMap := sshKnownHostsFile(user, c.Args.Get("config"))
	if errMap != nil {
		return errMap, nil
	}
	var origMode os.FileMode
	if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
		origMode = st.Mode().Perm()
		out, err := sshKeygen(ctx, "-F", sshHostPort(host, port), "-f", full)
		if err != nil {
			return nil, err
		}
		want := "rsa"
		if payload.Truthy(enc) {
			want = pyfmt.Str(enc)
		}
		lines := py.SplitLines(out, false)
		remove := map[int]bool{}
		for i := 0; i+1 < len(lines); i += 2 {
			f := strings.Fields(lines[i])
			g := strings.Fields(lines[i+1])
			if len(f) == 0 || len(g) < 2 {
				continue
			}
			n, err := strconv.Atoi(f[len(f)-1])
			if err != nil || g[len(g)-2] != want {
				continue
			}
			remove[n] = true
		}
		if len(remove) > 0 {
			b, err := readBounded(full, maxKeyFile)
			if err != nil {
				return nil, fmt.Errorf("%w: Couldn't remove old entry(ies) from known hosts file: '%w'", modules.ErrExecution, err)
			}
			var keep []string
			for i, l := range py.FileLines(string(b)) {
				if !remove[i+1] {
					keep = append(keep, l)
				}
			}
			if err := os.WriteFile(full, []byte(strings.Join(keep, "")), origMode); err != nil {
				return nil, fmt.Errorf("%w: Couldn't remove old entry(ies) from known hosts file: '%w'", modules.ErrExecution, err)
			}
		}
	}
	if payload.Truthy(key) {
		remote = []any{payload.NewMap("hostname", host, "enc", enc, "key", key)}
	}
	var lines strings.Builder
	for _, e := range remote {
		m := e.(*payload.Map)
		hn := m.Str("hostname")
		encS, keyS := pyfmt.Str(mget(m, "enc")), pyfmt.Str(mget(m, "key"))
		if hashHosts || port == nil || pyfmt.Str(port) == "22" || strings.Contains(hn, ":") {
			lines.WriteString(fmt.Sprintf("%s %s %s\n", hn, encS, keyS))
		} else {
			m.Set("port", port)
			lines.WriteString(fmt.Sprintf("[%s]:%s %s %s\n", hn, pyfmt.Str(port), encS, keyS))
		}
	}
	dir := filepath.Dir(full)
	if _, err := os.Stat(dir); err != nil {
		if err := os.MkdirAll(dir, 0o755); err == nil && payload.Truthy(user) {
			sshChownUser(user, dir)
			_ = os.Chmod(dir, 0o700)
		}
	}
	f, err := os.OpenFile(full, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: Couldn't append to known hosts file: '%w'", modules.ErrExecution, err)
	}
	_, werr := f.WriteString(lines.String())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("%w: Couldn't append to known hosts file: '%w'", modules.ErrExecution, werr)
	}
	sshChownUser(user, full)
	if origMode != 0 {
		_ = os.Chmod(full, origMode)
	} else {
		_ = os.Chmod(full, 0o600)
	}
	if payload.Truthy(key) && hashHosts {
		if _, err := sshHashKnownHosts(ctx, c, user, full); err != nil {
			return nil, err
		}
	}
	return payload.NewMap("status", "updated", "old", stored, "new", remote), nil
}

func mget(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

var b64Valid = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)

// pyB64Decode is base64.b64decode(s, validate=True): only alphabet
// characters and up to two trailing "=", padding needed only to complete
// a last partial quad (extra "=" after complete quads is ignored).
func pyB64Decode(s string) ([]byte, bool) {
	if !b64Valid.MatchString(s) {
		return nil, false
	}
	data := strings.TrimRight(s, "=")
	pads := len(s) - len(data)
	switch len(data) % 4 {
	case 1:
		return nil, false
	case 2:
		if pads < 2 {
			return nil, false
		}
	case 3:
		if pads < 1 {
			return nil, false
		}
	}
	b, err := base64.RawStdEncoding.DecodeString(data)
	if err != nil {
		return nil, false
	}
	return b, true
}

// sshRecvKnownHostEntries is recv_known_host_entries: the remote host's
// keys as ssh-keyscan prints them (up to five tries while it prints
// nothing), parsed like known_hosts lines; None when there are none.
func sshRecvKnownHostEntries(ctx context.Context, c *modules.Call) (any, error) {
	if _, err := which("ssh-keyscan"); err != nil {
		return nil, fmt.Errorf("%w: ssh-keyscan", modules.ErrCommandNotFound)
	}
	cmd := []string{"ssh-keyscan"}
	if port := c.Args.Get("port"); payload.Truthy(port) {
		cmd = append(cmd, "-p", pyfmt.Str(port))
	}
	enc := c.Args.Get("enc")
	if payload.Truthy(enc) {
		cmd = append(cmd, "-t", pyfmt.Str(enc))
	}
	if !payload.Truthy(enc) && c.Env != nil && c.Env.Grains != nil {
		if f, _ := c.Env.Grains.Get("osfinger"); f == "CentOS-5" {
			cmd = append(cmd, "-t", "rsa")
		}
	}
	if payload.Truthy(c.Args.Get("hash_known_hosts")) {
		cmd = append(cmd, "-H")
	}
	cmd = append(cmd, "-T", pyfmt.Str(c.Args.Get("timeout")), pyfmt.Str(c.Args.Get("hostname")))
	var lines []string
	for attempt := 0; attempt < 5 && len(lines) == 0; attempt++ {
		res, err := pkgRun(ctx, cmd, pkgRunOpts{combined: true})
		if err != nil {
			return nil, err
		}
		lines = py.SplitLines(res.stdout, false)
	}
	entries, err := sshParseOpenSSH(lines, c.Args.Get("fingerprint_hash_type"))
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	return entries, nil
}
