package wheel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrKey means a key wheel function was given a value it cannot use (an
// empty or unusable key name, a bad key size).
var ErrKey = errors.New("wheel: bad key argument")

var (
	matchParam    = Param{Name: "match", Required: true}
	acceptParams  = []Param{matchParam, {Name: "include_rejected", Default: false}, {Name: "include_denied", Default: false}}
	rejectParams  = []Param{matchParam, {Name: "include_accepted", Default: false}, {Name: "include_denied", Default: false}}
	hashTypeParam = Param{Name: "hash_type"}
)

// keyFunctions is Salt's key wheel module (salt/wheel/key.py) over the
// master's key store.
func keyFunctions() []Function {
	return []Function{
		{Name: "key.list", PyName: "list_", Params: []Param{matchParam}, Fn: keyList,
			Doc: "\n    List all the keys under a named status. Returns a dictionary.\n\n    match\n        The type of keys to list: pre, un or unaccepted for pending keys,\n        acc or accepted, rej or rejected, den or denied, or all.\n\n        >>> wheel.cmd('key.list', ['accepted'])\n        {'minions': ['minion1', 'minion2', 'minion3']}\n    "},
		{Name: "key.list_all", Fn: keyListAll,
			Doc: "\n    List all the keys, in every state and the master's own. Returns a dictionary.\n\n        >>> wheel.cmd('key.list_all')\n    "},
		{Name: "key.name_match", Params: []Param{matchParam}, Fn: keyNameMatch,
			Doc: "\n    List all the keys based on a glob match\n    "},
		{Name: "key.accept", Params: acceptParams, Fn: keyAccept,
			Doc: "\n    Accept keys based on a glob match. Returns a dictionary.\n\n        >>> wheel.cmd('key.accept', ['minion1'])\n        {'minions': ['minion1']}\n    "},
		{Name: "key.accept_dict", Params: acceptParams, Fn: keyAcceptDict,
			Doc: "\n    Accept keys based on a dict of keys ({'minions_pre': [...]}). Returns a dictionary.\n    "},
		{Name: "key.delete", Params: []Param{matchParam}, Fn: keyDelete,
			Doc: "\n    Delete keys based on a glob match. Returns a dictionary.\n    "},
		{Name: "key.delete_dict", Params: []Param{matchParam}, Fn: keyDeleteDict,
			Doc: "\n    Delete keys based on a dict of keys ({'minions': [...]}). Returns a dictionary.\n    "},
		{Name: "key.reject", Params: rejectParams, Fn: keyReject,
			Doc: "\n    Reject keys based on a glob match. Returns a dictionary.\n    "},
		{Name: "key.reject_dict", Params: rejectParams, Fn: keyRejectDict,
			Doc: "\n    Reject keys based on a dict of keys. Returns a dictionary.\n    "},
		{Name: "key.print", PyName: "key_str", Params: []Param{matchParam}, Fn: keyStr,
			Doc: "\n    Return the text of the public keys matching a glob. Returns a dictionary.\n    "},
		{Name: "key.master_key_str", Fn: keyMasterKeyStr,
			Doc: "\n    Returns the master's public key. Returns a dictionary.\n    "},
		{Name: "key.finger", Params: []Param{matchParam, hashTypeParam}, Fn: keyFinger,
			Doc: "\n    Return the matching key fingerprints. Returns a dictionary.\n\n    hash_type\n        The hash algorithm used to calculate the fingerprint (default: the\n        master's hash_type)\n    "},
		{Name: "key.finger_master", Params: []Param{hashTypeParam}, Fn: keyFingerMaster,
			Doc: "\n    Return the fingerprint of the master's public key\n    "},
		{Name: "key.gen", Params: []Param{{Name: "id_"}, {Name: "keysize", Default: int64(2048)}}, Fn: keyGen,
			Doc: "\n    Generate a key pair. No keys are stored on the master. Returns a\n    dictionary with the pub and priv keys.\n    "},
		{Name: "key.gen_accept", Params: []Param{{Name: "id_", Required: true}, {Name: "keysize", Default: int64(2048)}, {Name: "force", Default: false}}, Fn: keyGenAccept,
			Doc: "\n    Generate a key pair then accept the public key. Returns the key pair;\n    only the public key is kept on the master. Without force an already\n    accepted key is left alone and {} is returned.\n    "},
		{Name: "key.gen_keys", Params: []Param{{Name: "keydir"}, {Name: "keyname"}, {Name: "keysize"}, {Name: "user"}}, Fn: keyGenKeys,
			Doc: "\n    Generate minion RSA public keypair\n    "},
	}
}

// patterns turns a match argument into globs: a string (split on "," by
// the store, as Salt's name_match does) or a list of strings.
func patterns(v any) []string {
	switch x := v.(type) {
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, payload.Text(e))
		}
		return out
	case nil:
		return nil
	}
	return []string{payload.Text(v)}
}

// listingMap renders a listing as Salt's {status: [ids]} dictionary.
func listingMap(l keys.Listing) *payload.Map {
	out := payload.NewMap()
	for _, g := range l {
		if g.IsDict() {
			d := payload.NewMap()
			for i, id := range g.IDs {
				d.Set(id, g.Values[i])
			}
			out.Set(g.State.Name(), d)
			continue
		}
		ids := make([]any, len(g.IDs))
		for i, id := range g.IDs {
			ids[i] = id
		}
		out.Set(g.State.Name(), ids)
	}
	return out
}

// dictListing reads a {status: [ids]} dictionary argument (unknown
// statuses are ignored, as they name no key directory Salt acts on).
func dictListing(v any) keys.Listing {
	m, ok := v.(*payload.Map)
	if !ok {
		return nil
	}
	var out keys.Listing
	for _, it := range m.Items() {
		st, ok := keys.StateForName(payload.KeyString(it.Key))
		if !ok || st == keys.StateLocal {
			continue
		}
		var ids []string
		switch x := it.Value.(type) {
		case []any:
			for _, e := range x {
				ids = append(ids, payload.Text(e))
			}
		case string:
			ids = []string{x}
		}
		out = append(out, keys.Group{State: st, IDs: ids})
	}
	return out
}

func nameMatch(c *Call, match any) (*payload.Map, error) {
	l, err := c.Env.Keys().Match(false, patterns(match)...)
	if err != nil {
		return nil, err
	}
	return listingMap(l), nil
}

func keyList(ctx context.Context, c *Call) (any, error) {
	match, ok := c.Args["match"].(string)
	if !ok {
		return nil, fmt.Errorf("%w: 'match' must be a string", ErrKey)
	}
	st, all, err := keys.ParseListArg(match)
	if err != nil {
		return payload.NewMap(), nil // Salt returns {} for an unknown status
	}
	if all {
		return keyListAll(ctx, c)
	}
	ids, err := c.Env.Keys().ListState(st)
	if err != nil {
		return nil, err
	}
	return listingMap(keys.Listing{{State: st, IDs: ids}}), nil
}

func keyListAll(_ context.Context, c *Call) (any, error) {
	ks := c.Env.Keys()
	m, err := ks.List()
	if err != nil {
		return nil, err
	}
	local, err := ks.ListState(keys.StateLocal)
	if err != nil {
		return nil, err
	}
	m[keys.StateLocal] = local
	return listingMap(keys.ListingOf(m)), nil
}

func keyNameMatch(_ context.Context, c *Call) (any, error) { return nameMatch(c, c.Args["match"]) }

// keyAccept is key.accept: accept the pending (and, as asked, rejected
// and denied) keys matching the glob, then list where the matching keys
// now are.
func keyAccept(_ context.Context, c *Call) (any, error) {
	inc := keys.Include{Rejected: c.Bool("include_rejected"), Denied: c.Bool("include_denied")}
	if _, err := c.Env.Keys().AcceptWith(inc, patterns(c.Args["match"])...); err != nil {
		return nil, err
	}
	return nameMatch(c, c.Args["match"])
}

func keyAcceptDict(_ context.Context, c *Call) (any, error) {
	inc := keys.Include{Rejected: c.Bool("include_rejected"), Denied: c.Bool("include_denied")}
	out, err := c.Env.Keys().AcceptMatches(dictListing(c.Args["match"]), inc)
	if err != nil {
		return nil, err
	}
	return listingMap(out.After), nil
}

func keyReject(_ context.Context, c *Call) (any, error) {
	inc := keys.Include{Accepted: c.Bool("include_accepted"), Denied: c.Bool("include_denied")}
	if _, err := c.Env.Keys().RejectWith(inc, patterns(c.Args["match"])...); err != nil {
		return nil, err
	}
	return nameMatch(c, c.Args["match"])
}

func keyRejectDict(_ context.Context, c *Call) (any, error) {
	inc := keys.Include{Accepted: c.Bool("include_accepted"), Denied: c.Bool("include_denied")}
	out, err := c.Env.Keys().RejectMatches(dictListing(c.Args["match"]), inc)
	if err != nil {
		return nil, err
	}
	return listingMap(out.After), nil
}

func keyDelete(_ context.Context, c *Call) (any, error) {
	if _, err := c.Env.Keys().Delete(patterns(c.Args["match"])...); err != nil {
		return nil, err
	}
	return nameMatch(c, c.Args["match"])
}

func keyDeleteDict(_ context.Context, c *Call) (any, error) {
	out, err := c.Env.Keys().DeleteMatches(dictListing(c.Args["match"]), false)
	if err != nil {
		return nil, err
	}
	return listingMap(out.After), nil
}

func keyStr(_ context.Context, c *Call) (any, error) {
	l, err := c.Env.Keys().Print(patterns(c.Args["match"])...)
	if err != nil {
		return nil, err
	}
	return listingMap(l), nil
}

func keyMasterKeyStr(_ context.Context, c *Call) (any, error) {
	b, err := os.ReadFile(c.Env.Keys().MasterPubPath())
	if err != nil {
		return nil, err
	}
	return payload.NewMap("local", payload.NewMap("master.pub", string(b))), nil
}

// hashType is the hash_type argument, or the master's hash_type.
func hashType(c *Call) string {
	if h := c.Str("hash_type"); h != "" {
		return h
	}
	if h, ok := c.opt("hash_type").(string); ok && h != "" {
		return h
	}
	return "sha256"
}

// fingerOf is pem_finger of a file: "" for a missing file.
func fingerOf(path, hash string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return crypt.Fingerprint(b, hash)
}

// keyFinger is key.finger: fingerprints of the matching keys, the
// master's own *.pem/*.pub files included.
func keyFinger(_ context.Context, c *Call) (any, error) {
	ks := c.Env.Keys()
	h := hashType(c)
	m, err := ks.Match(true, patterns(c.Args["match"])...)
	if err != nil {
		return nil, err
	}
	out := payload.NewMap()
	for _, g := range m {
		d := payload.NewMap()
		for _, id := range g.IDs {
			fp, err := fingerOf(ks.KeyPath(g.State, id), h)
			if err != nil {
				return nil, err
			}
			d.Set(id, fp)
		}
		out.Set(g.State.Name(), d)
	}
	return out, nil
}

func keyFingerMaster(_ context.Context, c *Call) (any, error) {
	fp, err := fingerOf(c.Env.Keys().MasterPubPath(), hashType(c))
	if err != nil {
		return nil, err
	}
	return payload.NewMap("local", payload.NewMap("master.pub", fp)), nil
}

// keySize reads a keysize argument (an integer).
func keySize(v any) (int, error) {
	n, ok := payload.AsInt(v)
	if !ok {
		return 0, fmt.Errorf("%w: keysize must be an integer, not %s", ErrKey, payload.Text(v))
	}
	if n < 1024 || n > crypt.MaxKeyBits {
		return 0, fmt.Errorf("%w: RSA modulus length must be between 1024 and %d bits, not %d", ErrKey, crypt.MaxKeyBits, n)
	}
	return int(n), nil
}

var (
	reNotHostname = regexp.MustCompile(`[^a-zA-Z0-9.-]`)
)

// trimValue is Salt's InputSanitizer.trim.
func trimValue(v any) (string, error) {
	s := ""
	if v != nil {
		s = strings.TrimSpace(payload.Text(v))
	}
	if s == "" {
		return "", fmt.Errorf("%w: Empty value during sanitation", ErrKey)
	}
	return s, nil
}

// genPair makes a key pair in memory (Salt writes it to pki_dir and
// removes it again; gsalt never touches pki_dir for key.gen).
func genPair(bits int) (*payload.Map, error) {
	priv, err := crypt.GenerateKey(bits)
	if err != nil {
		return nil, err
	}
	return payload.NewMap("priv", string(crypt.MarshalPrivateKeyPEM(priv)),
		"pub", string(crypt.MarshalPublicKeyPEM(&priv.PublicKey))), nil
}

// keyGen is key.gen: a new key pair, stored nowhere. In Salt id_ only
// names the temporary files the pair goes through (an empty one is an
// error); gsalt generates the pair in memory.
func keyGen(_ context.Context, c *Call) (any, error) {
	if c.Args["id_"] != nil {
		if _, err := trimValue(c.Args["id_"]); err != nil {
			return nil, err
		}
	}
	bits, err := keySize(c.Args["keysize"])
	if err != nil {
		return nil, err
	}
	return genPair(bits)
}

// keyGenAccept is key.gen_accept: a new key pair whose public key is
// written as the accepted key of id_ (no salt/key event, as in Salt). An
// accepted key already there is kept and {} returned unless force.
func keyGenAccept(_ context.Context, c *Call) (any, error) {
	s, err := trimValue(c.Args["id_"])
	if err != nil {
		return nil, err
	}
	id := strings.Trim(reNotHostname.ReplaceAllString(s, ""), ".")
	ks := c.Env.Keys()
	if id == "" || !keys.ValidID(ks.PKIDir(), id) {
		return nil, fmt.Errorf("%w: cannot use %q as a minion id", ErrKey, s)
	}
	bits, err := keySize(c.Args["keysize"])
	if err != nil {
		return nil, err
	}
	ret, err := genPair(bits)
	if err != nil {
		return nil, err
	}
	path := ks.KeyPath(keys.StateAccepted, id)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && !c.Bool("force") {
		return payload.NewMap(), nil
	}
	if err := atomicfile.WriteFile(path, []byte(ret.Str("pub")), 0o644, false); err != nil {
		return nil, fmt.Errorf("wheel: write accepted key: %w", err)
	}
	return ret, nil
}

// keyGenKeys is key.gen_keys: write keyname.pem/keyname.pub into keydir
// (defaults: the gen_keys_dir option or pki_dir, the gen_keys option or
// "minion", the keysize option) unless keyname.pem exists, and return the
// sha256 fingerprint of keyname.pub.
func keyGenKeys(_ context.Context, c *Call) (any, error) {
	dir := c.Str("keydir")
	if dir == "" {
		if d, ok := c.opt("gen_keys_dir").(string); ok && d != "" {
			dir = d
		} else {
			dir = c.Env.Keys().PKIDir()
		}
	}
	name := c.Str("keyname")
	if name == "" {
		if n, ok := c.opt("gen_keys").(string); ok && n != "" {
			name = n
		} else {
			name = "minion"
		}
	}
	size := c.Args["keysize"]
	if !payload.Truthy(size) {
		size = c.opt("keysize")
		if size == nil {
			size = int64(2048)
		}
	}
	bits, err := keySize(size)
	if err != nil {
		return nil, err
	}
	return keys.GenKeys(name, dir, bits)
}
