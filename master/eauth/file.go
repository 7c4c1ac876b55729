package eauth

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/unixcrypt"

	"golang.org/x/crypto/bcrypt"
)

// fileAuth is salt.auth.file: credentials in a text file (filetype text,
// with hashtype plaintext, md5, sha256 or sha512 and configurable field
// separator and positions) or an Apache htpasswd/htdigest file. Options
// come from external_auth:file:^filename, ^filetype, ^hashtype,
// ^field_separator, ^username_field, ^password_field and ^realm.
type fileAuth struct{ env Env }

func init() { register("file", func(env Env) (Backend, error) { return fileAuth{env: env}, nil }) }

// ErrFileConfig reports a missing or unusable external_auth:file setting.
var ErrFileConfig = errors.New("salt.auth.file: bad configuration")

type fileConfig struct {
	filename, filetype, hashtype, sep, realm string
	userField, passField                     int
}

func (f fileAuth) config() (fileConfig, error) {
	c := fileConfig{filetype: "text", hashtype: "plaintext", sep: ":", userField: 1, passField: 2}
	ea, _ := f.env.Opts("external_auth")
	section, _ := dictGet(ea, "file")
	keys, vals, _ := dictItems(section)
	for i, k := range keys {
		if !strings.HasPrefix(k, "^") {
			continue
		}
		v := vals[i]
		switch k[1:] {
		case "filename":
			c.filename = PyStr(v)
		case "filetype":
			c.filetype = strings.ToLower(PyStr(v))
		case "hashtype":
			c.hashtype = PyStr(v)
		case "field_separator":
			c.sep = PyStr(v)
		case "realm":
			c.realm = PyStr(v)
		case "username_field", "password_field":
			n, ok := payloadInt(v)
			if !ok {
				return c, fmt.Errorf("%w: %s is not a number", ErrFileConfig, k)
			}
			if k == "^username_field" {
				c.userField = n
			} else {
				c.passField = n
			}
		}
	}
	if c.filename == "" {
		return c, fmt.Errorf("%w: An authentication file must be specified via external_auth:file:^filename", ErrFileConfig)
	}
	if _, err := os.Stat(c.filename); err != nil {
		return c, fmt.Errorf("%w: the configured external_auth:file:^filename (%s) does not exist on the filesystem", ErrFileConfig, c.filename)
	}
	return c, nil
}

func payloadInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		return int(x), true
	case string:
		var n int
		_, err := fmt.Sscanf(x, "%d", &n)
		return n, err == nil
	}
	return 0, false
}

func (f fileAuth) Auth(username, password string) (bool, error) {
	c, err := f.config()
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(c.filename)
	if err != nil {
		return false, fmt.Errorf("salt.auth.file: %w", err)
	}
	switch c.filetype {
	case "htpasswd":
		return htpasswdCheck(data, username, password), nil
	case "htdigest":
		if c.realm == "" {
			return false, fmt.Errorf("%w: A ^realm must be defined in external_auth:file for htdigest filetype", ErrFileConfig)
		}
		return htdigestCheck(data, username, c.realm, password), nil
	}
	return textCheck(data, c, username, password)
}

func (fileAuth) Groups(string) ([]string, error) { return nil, nil }

// textCheck reads the text filetype: the first line whose user field is
// username decides.
func textCheck(data []byte, c fileConfig, username, password string) (bool, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		fields := strings.Split(strings.TrimSpace(sc.Text()), c.sep)
		if c.userField < 1 || c.userField > len(fields) {
			return false, fmt.Errorf("%w: username field (%d) does not exist in file %s", ErrFileConfig, c.userField-1, c.filename)
		}
		if c.passField < 1 || c.passField > len(fields) {
			return false, fmt.Errorf("%w: password field (%d) does not exist in file %s", ErrFileConfig, c.passField-1, c.filename)
		}
		if fields[c.userField-1] != username {
			continue
		}
		stored := fields[c.passField-1]
		if c.hashtype == "plaintext" {
			return subtle.ConstantTimeCompare([]byte(stored), []byte(password)) == 1, nil
		}
		var sum []byte
		switch c.hashtype {
		case "md5":
			s := md5.Sum([]byte(password))
			sum = s[:]
		case "sha256":
			s := sha256.Sum256([]byte(password))
			sum = s[:]
		case "sha512":
			s := sha512.Sum512([]byte(password))
			sum = s[:]
		default:
			return false, fmt.Errorf("Hash func '%s' is not supported.", c.hashtype)
		}
		return subtle.ConstantTimeCompare([]byte(stored), []byte(hex.EncodeToString(sum))) == 1, nil
	}
	return false, nil
}

// htpasswdCheck verifies an Apache htpasswd entry: bcrypt ($2y$, $2a$,
// $2b$), Apache MD5 ($apr1$), MD5-crypt ($1$), {SHA} or plaintext.
func htpasswdCheck(data []byte, username, password string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user != username {
			continue
		}
		switch {
		case strings.HasPrefix(hash, "$2"):
			return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
		case strings.HasPrefix(hash, "$apr1$"):
			return md5CryptVerify(hash, password, "$apr1$")
		case strings.HasPrefix(hash, "$1$"):
			return md5CryptVerify(hash, password, "$1$")
		case strings.HasPrefix(hash, "{SHA}"):
			s := sha1.Sum([]byte(password))
			want := "{SHA}" + base64.StdEncoding.EncodeToString(s[:])
			return subtle.ConstantTimeCompare([]byte(hash), []byte(want)) == 1
		case strings.HasPrefix(hash, "$"):
			return false // sha256/sha512-crypt and others are not supported
		}
		return subtle.ConstantTimeCompare([]byte(hash), []byte(password)) == 1
	}
	return false
}

// htdigestCheck verifies an htdigest line user:realm:md5(user:realm:pass).
func htdigestCheck(data []byte, username, realm, password string) bool {
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(strings.TrimRight(line, "\r"), ":")
		if len(f) != 3 || f[0] != username || f[1] != realm {
			continue
		}
		s := md5.Sum([]byte(username + ":" + realm + ":" + password))
		return subtle.ConstantTimeCompare([]byte(f[2]), []byte(hex.EncodeToString(s[:]))) == 1
	}
	return false
}

// md5CryptVerify checks a $1$ / $apr1$ MD5-crypt hash.
func md5CryptVerify(hash, password, magic string) bool {
	rest := strings.TrimPrefix(hash, magic)
	salt, _, ok := strings.Cut(rest, "$")
	if !ok {
		return false
	}
	if len(salt) > 8 {
		salt = salt[:8]
	}
	want := unixcrypt.MD5Crypt(password, salt, magic)
	return subtle.ConstantTimeCompare([]byte(hash), []byte(want)) == 1
}
