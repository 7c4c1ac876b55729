package pillar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// libvirtMu serialises key generation (two minions asking at once must
// not both create the CA).
var libvirtMu sync.Mutex

// extLibvirt is salt/pillar/libvirt.py (loaded when certtool is on
// PATH): the hypervisor's libvirt TLS material as pillar keys
// "libvirt.<file>.pem" plus "libvirt.cacert.pem", generated with certtool
// under pki_dir/libvirt on first use (a CA, then a server and a client
// key and certificate per minion; the subject fields come from the
// pillar keys "ext_pillar_virt.country", ".st", ".locality",
// ".organization" and ".expiration_days", which virt.keys passes).
func extLibvirt() ExtModule {
	return ExtModule{Name: "libvirt", Params: commandParam,
		Available: func() bool { _, err := exec.LookPath("certtool"); return err == nil },
		Fn: func(ctx context.Context, c *ExtCall) (any, error) {
			pki := c.Opts().Str("pki_dir")
			keyDir := filepath.Join(pki, "libvirt", c.MinionID)
			cacert := filepath.Join(pki, "libvirt", "cacert.pem")
			if fi, err := os.Stat(keyDir); err != nil || !fi.IsDir() {
				get := func(k, def string) string {
					if v, ok := c.Pillar.Get("ext_pillar_virt." + k); ok {
						return pyfmt.Str(v)
					}
					return def
				}
				libvirtMu.Lock()
				fqdn, hasFQDN := c.r.grains.Get("fqdn")
				err := genHyperKeys(ctx, pki, c.MinionID, fqdn, hasFQDN, get("country", "US"), get("st", "Utah"),
					get("locality", "Salt Lake City"), get("organization", "Salted"), get("expiration_days", "365"))
				libvirtMu.Unlock()
				if err != nil {
					return nil, err
				}
			}
			names, err := readDirNames(keyDir)
			if err != nil {
				return nil, pyOSError(err, keyDir)
			}
			ret := payload.NewMap()
			for _, n := range names {
				if !strings.HasSuffix(n, ".pem") {
					continue
				}
				b, err := os.ReadFile(filepath.Join(keyDir, n))
				if err != nil {
					return nil, pyOSError(err, filepath.Join(keyDir, n))
				}
				ret.Set("libvirt."+n, string(b))
			}
			b, err := os.ReadFile(cacert)
			if err != nil {
				return nil, pyOSError(err, cacert)
			}
			ret.Set("libvirt.cacert.pem", string(b))
			return ret, nil
		}}
}

// pyOSError is Python's OSError text for err on path.
func pyOSError(err error, path string) error {
	return fmt.Errorf("[Errno %d] %s: %s", errnoOf(err), pyStrerror(unwrapPathErr(err)), pyfmt.Repr(path))
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func fileMissing(p string) bool {
	_, err := os.Stat(p)
	return err != nil
}

// genHyperKeys is libvirt.py's gen_hyper_keys: files that exist are kept.
// Certificate generation failures are ignored as Salt's subprocess.call
// does (the missing file then fails the read); key generation failures
// are errors (check=True).
//
// The certificates' cn is the minion's fqdn grain (Salt's __grains__ in
// an ext_pillar module are the compiled minion's).
func genHyperKeys(ctx context.Context, pki, id string, fqdnV any, hasFQDN bool, country, state, locality, org, days string) error {
	keyDir := filepath.Join(pki, "libvirt")
	if err := os.MkdirAll(keyDir, 0o755); err != nil {
		return pyOSError(err, keyDir)
	}
	cakey := filepath.Join(keyDir, "cakey.pem")
	cacert := filepath.Join(keyDir, "cacert.pem")
	cainfo := filepath.Join(keyDir, "ca.info")
	fqdn := pyfmt.Str(fqdnV)
	steps := []genStep{
		{file: cainfo, info: "cn = salted\nca\ncert_signing_key"},
		{file: cakey, priv: true},
		{file: cacert, args: []string{"--generate-self-signed", "--load-privkey", cakey, "--template", cainfo, "--outfile", cacert}},
	}
	sub := filepath.Join(keyDir, id)
	priv := filepath.Join(sub, "serverkey.pem")
	cert := filepath.Join(sub, "servercert.pem")
	srvinfo := filepath.Join(sub, "server.info")
	cpriv := filepath.Join(sub, "clientkey.pem")
	ccert := filepath.Join(sub, "clientcert.pem")
	clientinfo := filepath.Join(sub, "client.info")
	steps = append(steps,
		genStep{file: srvinfo, info: fmt.Sprintf("organization = salted\ncn = %s\ntls_www_server\nencryption_key\nsigning_key\ndigitalSignature\nexpiration_days = %s", fqdn, days)},
		genStep{file: priv, priv: true},
		genStep{file: cert, args: []string{"--generate-certificate", "--load-privkey", priv, "--load-ca-certificate", cacert, "--load-ca-privkey", cakey, "--template", srvinfo, "--outfile", cert}},
		genStep{file: clientinfo, info: fmt.Sprintf("country = %s\nstate = %s\nlocality = %s\norganization = %s\ncn = %s\ntls_www_client\nencryption_key\nsigning_key\ndigitalSignature", country, state, locality, org, fqdn)},
		genStep{file: cpriv, priv: true},
		genStep{file: ccert, args: []string{"--generate-certificate", "--load-privkey", cpriv, "--load-ca-certificate", cacert, "--load-ca-privkey", cakey, "--template", clientinfo, "--outfile", ccert}},
	)
	for i, s := range steps {
		if i == 3 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return pyOSError(err, sub)
			}
		}
		if !fileMissing(s.file) {
			continue
		}
		switch {
		case s.info != "":
			if !hasFQDN && (s.file == srvinfo || s.file == clientinfo) {
				return errors.New("'fqdn'") // Python's KeyError text
			}
			if err := os.WriteFile(s.file, []byte(s.info), 0o644); err != nil {
				return pyOSError(err, s.file)
			}
		case s.priv:
			var out, errb bytes.Buffer
			cmd := exec.CommandContext(ctx, "certtool", "--generate-privkey")
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("Command '['certtool', '--generate-privkey']' returned non-zero exit status %d.", exitCode(err))
			}
			if err := os.WriteFile(s.file, out.Bytes(), 0o600); err != nil {
				return pyOSError(err, s.file)
			}
		default:
			cmd := exec.CommandContext(ctx, "certtool", s.args...)
			_ = cmd.Run() // subprocess.call: the status is not checked
		}
	}
	return nil
}

// genStep is one file gen_hyper_keys creates when it is missing.
type genStep struct {
	file string
	info string // written when file is an info template
	priv bool   // file is a private key from --generate-privkey
	args []string
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
