package builtin

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/unixcrypt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's linux_shadow module (the shadow virtual module on
// Linux): /etc/shadow reads, password hashes (gen_password with Go's
// crypt(3) in internal/unixcrypt) and changes with chage, passwd and a
// direct edit of the shadow file as Salt does.

// shadowEntry is one line of /etc/shadow; numeric fields that are empty
// are -1 as in Python's spwd.
type shadowEntry struct {
	name, passwd string
	nums         [7]int64 // lstchg, min, max, warn, inact, expire, flag
}

// shadowFile is the shadow file below root ("" for /).
func shadowFile(root string) string {
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, "etc/shadow")
}

// readShadow parses root/etc/shadow. A line whose numeric fields do not
// parse is skipped (Python raises for it).
func readShadow(root string) ([]shadowEntry, error) {
	f, err := os.Open(shadowFile(root))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []shadowEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		comps := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(comps) < 9 {
			continue
		}
		e := shadowEntry{name: comps[0], passwd: comps[1]}
		ok := true
		for i := 2; i < 9; i++ {
			e.nums[i-2] = -1
			if comps[i] == "" {
				continue
			}
			n, err := strconv.ParseInt(comps[i], 10, 64)
			if err != nil {
				ok = false
				break
			}
			e.nums[i-2] = n
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// shadowKeys are info's keys for nums, in Salt's order after name, passwd.
var shadowKeys = []string{"lstchg", "min", "max", "warn", "inact", "expire"}

// shadowInfo is shadow.info: the entry, or every field "" when the user
// (or the file) is missing.
func shadowInfo(name, root string) *payload.Map {
	all, _ := readShadow(root)
	for _, e := range all {
		if e.name == name {
			m := payload.NewMap("name", e.name, "passwd", e.passwd)
			for i, k := range shadowKeys {
				m.Set(k, e.nums[i])
			}
			return m
		}
	}
	m := payload.NewMap("name", "", "passwd", "")
	for _, k := range shadowKeys {
		m.Set(k, "")
	}
	return m
}

// shadowCmd is the command with "-R root" after its name when root is set.
func shadowCmd(c *modules.Call, bin string, rest ...string) []string {
	cmd := []string{bin}
	if r := userRoot(c); r != "" {
		cmd = append(cmd, "-R", r)
	}
	return append(cmd, rest...)
}

// shadowSetAttrib is linux_shadow._set_attrib with chage.
func shadowSetAttrib(key, param string, validate bool) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		name, root := c.Args.Str("name"), userRoot(c)
		arg := map[string]string{"inact": "inactdays", "max": "maxdays", "min": "mindays", "warn": "warndays", "lstchg": "date", "expire": "expire"}[key]
		value := c.Args.Get(arg)
		pre := shadowInfo(name, root)
		if pre.Str("name") == "" {
			return false, nil
		}
		if cur, _ := pre.Get(key); pyEq(cur, value) {
			return true, nil
		}
		res, err := pkgRun(ctx, shadowCmd(c, "chage", param, pyfmt.Str(value), name), pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		if !validate {
			return res.retcode == 0, nil
		}
		post, _ := shadowInfo(name, root).Get(key)
		return pyEq(post, value), nil
	}
}

// shadowAlgorithms is crypt.methods as Python lists them on Linux.
var shadowAlgorithms = []string{"sha512", "sha256", "blowfish", "md5", "crypt"}

// errShadowMethod: gen_password was asked for a method gsalt does not
// implement (blowfish, DES crypt).
var errShadowMethod = errors.New("hash method not implemented by gsalt")

// shadowGenPassword is salt.utils.pycrypto.gen_hash over crypt.
func shadowGenPassword(password, cryptSalt any, algorithm string) (any, error) {
	known := false
	for _, a := range shadowAlgorithms {
		known = known || a == algorithm
	}
	if !known {
		return nil, fmt.Errorf("%w: Cannot hash using '%s' hash algorithm. Natively supported algorithms are: %s. If passlib is installed (False), the supported algorithms are: %s.",
			modules.ErrInvocation, algorithm, pyfmt.Repr(toAnyList(shadowAlgorithms)), pyfmt.Repr(toAnyList(shadowAlgorithms)))
	}
	m, ok := unixcrypt.MethodByName(algorithm)
	if !ok {
		return nil, fmt.Errorf("%w: %w: %s", modules.ErrExecution, errShadowMethod, algorithm)
	}
	pw := ""
	if password == nil {
		b := make([]byte, 20)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
		for i := range b {
			b[i] = chars[int(b[i])%len(chars)]
		}
		pw = string(b)
	} else {
		pw = pyfmt.Str(password)
	}
	var setting string
	if cryptSalt == nil {
		s, err := unixcrypt.MkSalt(m)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		setting = s
	} else {
		setting = "$" + m.Ident + "$" + pyfmt.Str(cryptSalt)
	}
	h, err := unixcrypt.Crypt(pw, setting)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return h, nil
}

func toAnyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// shadowSetPassword is linux_shadow.set_password.
func shadowSetPassword(ctx context.Context, c *modules.Call) (any, error) {
	name, root := c.Args.Str("name"), userRoot(c)
	password := pyfmt.Str(c.Args.Get("password"))
	res, err := pkgRun(ctx, []string{"id", name}, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	if res.retcode != 0 {
		c.Log().Warn("user does not exist, cannot set password", "user", name)
		return false, nil
	}
	if modules.IsTrue(c.Args.Get("use_usermod")) {
		if _, err := pkgRun(ctx, shadowCmd(c, "usermod", "-p", password, name), pkgRunOpts{}); err != nil {
			return nil, err
		}
		return shadowInfo(name, root).Str("passwd") == password, nil
	}
	file := "/etc/shadow"
	if grainsData(c).Str("os") == "ALT" {
		file = "/etc/tcb/" + name + "/shadow"
	}
	if root != "" {
		file = filepath.Join(root, strings.TrimPrefix(file, "/"))
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
		return &payload.Map{}, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	lstchg := strconv.FormatInt(int64(time.Since(time.Date(1970, 1, 1, 0, 0, 0, 0, time.Local)).Hours()/24), 10)
	var out strings.Builder
	found := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		comps := strings.Split(strings.TrimSpace(line), ":")
		if comps[0] == name {
			if len(comps) > 9 {
				comps = comps[:9]
			}
			for len(comps) < 9 {
				comps = append(comps, "")
			}
			found = true
			comps[1], comps[2] = password, lstchg
			line = strings.Join(comps, ":") + "\n"
		}
		out.WriteString(line)
	}
	if !found {
		c.Log().Warn("shadow entry not present for user, adding", "user", name)
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		_, werr := fmt.Fprintf(f, "%s:%s:%s::::::\n", name, password, lstchg)
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	} else if err := os.WriteFile(file, []byte(out.String()), 0o600); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return shadowInfo(name, root).Str("passwd") == password, nil
}

// shadowPasswd runs passwd with flag and reports the lock state after.
func shadowLock(lock bool) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		name, root := c.Args.Str("name"), userRoot(c)
		pre := shadowInfo(name, root)
		if pre.Str("name") == "" {
			return false, nil
		}
		if strings.HasPrefix(pre.Str("passwd"), "!") == lock {
			return true, nil
		}
		flag := "-u"
		if lock {
			flag = "-l"
		}
		if _, err := pkgRun(ctx, shadowCmd(c, "passwd", flag, name), pkgRunOpts{}); err != nil {
			return nil, err
		}
		return strings.HasPrefix(shadowInfo(name, root).Str("passwd"), "!") == lock, nil
	}
}

func shadowFunctions() []modules.Function {
	rootP := opt("root", nil)
	attrib := func(fn, arg, key, param, doc string, validate bool) modules.Function {
		return modules.Function{Name: "shadow." + fn, Spec: modules.Spec{Params: []modules.Param{req("name"), req(arg), rootP}},
			Doc: doc, Fn: shadowSetAttrib(key, param, validate)}
	}
	return []modules.Function{
		{Name: "shadow.default_hash", Doc: "Returns the default hash used for unset passwords\n\nCLI Example:\n\n    salt '*' shadow.default_hash",
			Fn: func(context.Context, *modules.Call) (any, error) { return "!", nil }},
		{Name: "shadow.info", Spec: modules.Spec{Params: []modules.Param{req("name"), rootP}},
			Doc: "Return information for the specified user\n\nname\n    User to get the information for\n\nroot\n    Directory to chroot into\n\nCLI Example:\n\n    salt '*' shadow.info root",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return shadowInfo(c.Args.Str("name"), userRoot(c)), nil
			}},
		attrib("set_inactdays", "inactdays", "inact", "-I", "Set the number of days of inactivity after a password has expired before\nthe account is locked. See man chage.\n\nCLI Example:\n\n    salt '*' shadow.set_inactdays username 7", true),
		attrib("set_maxdays", "maxdays", "max", "-M", "Set the maximum number of days during which a password is valid.\nSee man chage.\n\nCLI Example:\n\n    salt '*' shadow.set_maxdays username 90", true),
		attrib("set_mindays", "mindays", "min", "-m", "Set the minimum number of days between password changes. See man chage.\n\nCLI Example:\n\n    salt '*' shadow.set_mindays username 7", true),
		attrib("set_warndays", "warndays", "warn", "-W", "Set the number of days of warning before a password change is required.\nSee man chage.\n\nCLI Example:\n\n    salt '*' shadow.set_warndays username 7", true),
		attrib("set_date", "date", "lstchg", "-d", "Sets the value for the date the password was last changed to days since the\nepoch (January 1, 1970). See man chage.\n\nCLI Example:\n\n    salt '*' shadow.set_date username 0", false),
		attrib("set_expire", "expire", "expire", "-E", "Sets the value for the date the account expires as days since the epoch\n(January 1, 1970). Using a value of -1 will clear expiration. See man\nchage.\n\nCLI Example:\n\n    salt '*' shadow.set_expire username -1", false),
		{Name: "shadow.gen_password", Spec: modules.Spec{Params: []modules.Param{req("password"), opt("crypt_salt", nil), opt("algorithm", "sha512")}},
			Doc: "Generate hashed password\n\npassword\n    Plaintext password to be hashed.\n\ncrypt_salt\n    Crpytographic salt. If not given, a random 8-character salt will be\n    generated.\n\nalgorithm\n    sha512 (default), sha256 or md5\n\nCLI Example:\n\n    salt '*' shadow.gen_password 'I_am_password'",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				algo := "sha512" // gen_hash's default for None
				if v := c.Args.Get("algorithm"); v != nil {
					algo = pyfmt.Str(v)
				}
				return shadowGenPassword(c.Args.Get("password"), c.Args.Get("crypt_salt"), algo)
			}},
		{Name: "shadow.del_password", Spec: modules.Spec{Params: []modules.Param{req("name"), rootP}},
			Doc: "Delete the password from name user\n\nCLI Example:\n\n    salt '*' shadow.del_password username",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				name := c.Args.Str("name")
				if _, err := pkgRun(ctx, shadowCmd(c, "passwd", "-d", name), pkgRunOpts{combined: true}); err != nil {
					return nil, err
				}
				u := shadowInfo(name, userRoot(c))
				return u.Str("passwd") == "" && u.Str("name") == name, nil
			}},
		{Name: "shadow.lock_password", Spec: modules.Spec{Params: []modules.Param{req("name"), rootP}},
			Doc: "Lock the password from specified user\n\nCLI Example:\n\n    salt '*' shadow.lock_password username", Fn: shadowLock(true)},
		{Name: "shadow.unlock_password", Spec: modules.Spec{Params: []modules.Param{req("name"), rootP}},
			Doc: "Unlock the password from name user\n\nCLI Example:\n\n    salt '*' shadow.unlock_password username", Fn: shadowLock(false)},
		{Name: "shadow.set_password", Spec: modules.Spec{Params: []modules.Param{req("name"), req("password"), opt("use_usermod", false), rootP}},
			Doc: "Set the password for a named user. The password must be a properly defined\nhash. A password hash can be generated with shadow.gen_password.\n\nCLI Example:\n\n    salt '*' shadow.set_password root '$1$UYCIxa628.9qXjpQCjM4a..'",
			Fn:  shadowSetPassword},
		{Name: "shadow.list_users", Spec: modules.Spec{Params: []modules.Param{rootP}},
			Doc: "Return a list of all shadow users\n\nCLI Example:\n\n    salt '*' shadow.list_users",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return sortedNames(readShadow(userRoot(c)))(func(e shadowEntry) string { return e.name })
			}},
	}
}
