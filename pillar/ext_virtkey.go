package pillar

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// VirtKeyWindow is how long a virtkey authorization stays valid (Salt's
// VirtKey.accept: ten minutes).
const VirtKeyWindow = 600 * time.Second

// extVirtkey is salt/pillar/virtkey.py: a hypervisor minion asks (through
// pillar.ext {"virtkey": [name, key]}) to have the public key of a VM it
// seeded accepted. The key is written to pki_dir/minions/<name> when
// pki_dir/virtkeys/<hypervisor>/<name> holds an authorization (a Unix
// time) younger than ten minutes; the authorization is then removed. The
// outcome is set in the pillar as virtkey: {name: True|False}.
func extVirtkey() ExtModule {
	return ExtModule{Name: "virtkey", Params: []ExtParam{{Name: "name", Required: true}, {Name: "key", Required: true}},
		Fn: func(_ context.Context, c *ExtCall) (any, error) {
			name := c.Str("name")
			ok, err := VirtKeyAccept(c.Opts().Str("pki_dir"), c.MinionID, name, c.Str("key"), time.Now(), c.Log.Error, c.Log.Warn)
			if err != nil {
				return nil, err
			}
			c.Pillar.Set("virtkey", payload.NewMap(name, ok))
			return payload.NewMap(), nil
		}}
}

// VirtKeyAuthorize is VirtKey.authorize: the master expects hyper to ask
// for id's key within VirtKeyWindow of now.
func VirtKeyAuthorize(pkiDir, hyper, id string, now time.Time) error {
	dir := filepath.Join(pkiDir, "virtkeys", hyper)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, id), []byte(strconv.FormatInt(now.Unix(), 10)), 0o600)
}

// VirtKeyAccept is VirtKey.accept; errorf and warnf receive Salt's log
// lines for a refused request.
func VirtKeyAccept(pkiDir, hyper, id, pub string, now time.Time, errorf, warnf func(string, ...any)) (bool, error) {
	if strings.ContainsAny(hyper, "/\x00") || strings.ContainsAny(id, "/\x00") || id == "" || id == "." || id == ".." || hyper == ".." {
		errorf(fmt.Sprintf("Request to sign key for minion '%s' on hyper '%s' denied: no authorization", id, hyper))
		return false, nil
	}
	dir := filepath.Join(pkiDir, "virtkeys", hyper)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	auth := filepath.Join(dir, id)
	b, err := os.ReadFile(auth)
	if err != nil {
		errorf(fmt.Sprintf("Request to sign key for minion '%s' on hyper '%s' denied: no authorization", id, hyper))
		return false, nil
	}
	expiry, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		errorf(fmt.Sprintf("Invalid expiry data in %s", auth))
		return false, nil
	}
	if now.Unix()-expiry > int64(VirtKeyWindow/time.Second) {
		warnf(fmt.Sprintf(`Request to sign key for minion "%s" on hyper "%s" denied: authorization expired`, id, hyper))
		return false, nil
	}
	if err := os.WriteFile(filepath.Join(pkiDir, "minions", id), []byte(pub), 0o644); err != nil {
		return false, err
	}
	_ = os.Remove(auth)
	return true, nil
}
