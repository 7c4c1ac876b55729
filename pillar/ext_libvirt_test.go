package pillar_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

func parseCert(t *testing.T, v any) *x509.Certificate {
	t.Helper()
	s, _ := v.(string)
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		t.Fatalf("not a PEM certificate: %.80q", s)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLibvirtExtPillar runs the libvirt ext_pillar on demand (as virt.keys
// asks through pillar.ext) with the real certtool: a CA, server and client
// certificates for the minion signed by it, the subject from the
// ext_pillar_virt.* pillar keys, kept on disk and served again unchanged.
func TestLibvirtExtPillar(t *testing.T) {
	if _, err := exec.LookPath("certtool"); err != nil {
		t.Skip("certtool (gnutls-bin) is not installed")
	}
	pki := t.TempDir()
	opts := pillar.GetterFunc(func(k string) (any, bool) {
		switch k {
		case "pki_dir":
			return pki, true
		case "pillar_roots":
			return map[string]any{"base": []any{t.TempDir()}}, true
		}
		return nil, false
	})
	cfg := pillar.ConfigFromOpts(opts)
	cfg.Opts = payload.NewMap("pki_dir", pki)
	comp := pillar.New(cfg, pillar.Options{Logger: quiet})
	grains := payload.NewMap("id", "hyper1", "fqdn", "hyper1.example.org")
	override := payload.NewMap("ext_pillar_virt.country", "FR", "ext_pillar_virt.organization", "Acme")
	req := pillar.Request{ID: "hyper1", Grains: grains, Override: override, Ext: payload.NewMap("libvirt", "_")}
	got, err := comp.Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"libvirt.cacert.pem", "libvirt.servercert.pem", "libvirt.serverkey.pem", "libvirt.clientcert.pem", "libvirt.clientkey.pem"} {
		if v, ok := got.Get(k); !ok || !strings.Contains(payload.Text(v), "-----BEGIN") {
			t.Fatalf("%s missing or not PEM in %v", k, got.Keys())
		}
	}
	ca := parseCert(t, get(got, "libvirt.cacert.pem"))
	srv := parseCert(t, get(got, "libvirt.servercert.pem"))
	cli := parseCert(t, get(got, "libvirt.clientcert.pem"))
	if ca.Subject.CommonName != "salted" || !ca.IsCA {
		t.Errorf("CA subject %v IsCA %v", ca.Subject, ca.IsCA)
	}
	for _, c := range []*x509.Certificate{srv, cli} {
		if err := c.CheckSignatureFrom(ca); err != nil {
			t.Errorf("%v not signed by the CA: %v", c.Subject, err)
		}
		if c.Subject.CommonName != "hyper1.example.org" {
			t.Errorf("cn = %q, want the fqdn grain", c.Subject.CommonName)
		}
	}
	if len(cli.Subject.Country) != 1 || cli.Subject.Country[0] != "FR" || cli.Subject.Organization[0] != "Acme" {
		t.Errorf("client subject %v, want C=FR O=Acme from ext_pillar_virt.*", cli.Subject)
	}
	if srv.NotAfter.Sub(srv.NotBefore) < 360*24*time.Hour {
		t.Errorf("server cert valid %v, want 365 days", srv.NotAfter.Sub(srv.NotBefore))
	}
	if _, err := os.Stat(filepath.Join(pki, "libvirt", "hyper1", "server.info")); err != nil {
		t.Error(err)
	}
	again, err := comp.Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := payload.Text(get(again, "libvirt.serverkey.pem")), payload.Text(get(got, "libvirt.serverkey.pem")); a != b {
		t.Error("the keys were generated again")
	}
	// Not on demand when on_demand_ext_pillar leaves libvirt out.
	cfg.OnDemandExtPillar = []string{"virtkey"}
	p, err := pillar.New(cfg, pillar.Options{Logger: quiet}).Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Get("libvirt.cacert.pem"); ok {
		t.Error("libvirt ran on demand though on_demand_ext_pillar does not list it")
	}
	// Without the fqdn grain Salt's module fails with KeyError('fqdn').
	req.ID, req.Grains = "hyper2", payload.NewMap("id", "hyper2")
	p, err = comp.Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := p.Get("_errors"); !strings.Contains(pyList(e), "Failed to load ext_pillar libvirt: 'fqdn'") {
		t.Errorf("_errors = %v", e)
	}
}

func pyList(v any) string {
	l, _ := v.([]any)
	var sb strings.Builder
	for _, e := range l {
		sb.WriteString(payload.Text(e) + "\n")
	}
	return sb.String()
}

func get(m *payload.Map, k string) any { v, _ := m.Get(k); return v }
