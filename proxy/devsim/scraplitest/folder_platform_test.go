package scraplitest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/transport"

	"github.com/gsalt/gsalt/proxy/devsim"
)

// acmeFolder is a whole platform written as a folder: no Go code. It reuses the ios
// configuration grammar and Go handlers by name and renders its own show outputs and startup
// configuration from templates.
var acmeFolder = map[string]string{
	"platform.yaml": `
grammar: ios
banner: "ACME RouterOS\n"
filters: [include, exclude, begin, count]
prompts: {no_hostname: acme}
terminal: {default_length: 24, min_width: 0, max_width: 512, enable_tries: 3}
invalid_caret: true
errors:
  invalid: "% Invalid input detected at '^' marker.\n\n"
  ambiguous: '% Ambiguous command:  "{line}"'
  incomplete: "% Incomplete command.\n"
  bad_secret: "% Bad secrets\n"
messages:
  configure_terminal: "Enter configuration commands, one per line.  End with CNTL/Z."
  write_memory: "Saved."
interfaces:
  mgmt: GigabitEthernet1
  next: GigabitEthernet2
  prev: GigabitEthernet3
  spare: GigabitEthernet4
  types:
    - {long: GigabitEthernet, short: Gi, mac: true}
    - {long: Loopback, short: Lo, creatable: true}
identity: {mac_prefix: "0a00.00", serial: "ACME%05d", ssh_version: SSH-2.0-ACME}
config_header: header.tmpl
startup_config: startup.tmpl
commands:
  - {cmd: "enable <args?>", handler: enable}
  - {cmd: disable, handler: disable, priv: true}
  - {cmd: exit, handler: exit}
  - {cmd: "terminal length <arg>", handler: terminal_length}
  - {cmd: "terminal width <arg>", handler: terminal_width}
  - {cmd: configure terminal, handler: configure_terminal, priv: true}
  - {cmd: write memory, handler: write_memory, priv: true}
  - {cmd: "show running-config <args?>", handler: show_running, priv: true, show: true}
  - {cmd: show version, template: version.tmpl, show: true}
  - {cmd: show acme neighbors, template: neighbors.tmpl, show: true}
`,
	"header.tmpl": "! ACME config of {{.Host}}\n",
	"startup.tmpl": `hostname {{.Hostname}}
interface Loopback0
 ip address {{.Loopback}} 255.255.255.255
interface GigabitEthernet1
 ip address {{.MgmtIP}} 255.255.0.0
{{range .Links}}interface {{.Port}}
{{with .Peer}} description to {{.Host}}
 ip address {{.LocalIP}} 255.255.255.254
{{end}}{{end -}}
router bgp {{.ASN}}
{{range .Neighbors}} neighbor {{.RemoteIP}} remote-as {{.ASN}}
{{end -}}
end
`,
	"version.tmpl": "ACME RouterOS 1.0 on {{.Host}}, serial {{.Device.Serial}}, up {{since .Uptime}}",
	"neighbors.tmpl": `{{range .BGP.Peers}}{{.Addr}} AS{{.ASN}} {{if .Established}}up via {{.LocalPort}}{{else}}down{{end}}
{{end -}}`,
}

func writeAcme(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "platforms", "acme")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFolderPlatformOverSSH adds a platform from a temporary folder (Options.Platforms) and
// drives it over SSH with scrapligo's cisco_iosxe driver.
func TestFolderPlatformOverSSH(t *testing.T) {
	root := writeAcme(t, acmeFolder)
	if got := devsim.PlatformNames(os.DirFS(root)); !strings.Contains(strings.Join(got, ","), "acme") {
		t.Fatalf("PlatformNames = %v", got)
	}
	f := startFleet(t, devsim.Options{Platform: "acme", Platforms: os.DirFS(root), Devices: 3})
	for i, want := range []string{
		"ACME RouterOS 1.0 on sw1, serial ACME00001",
		"ACME RouterOS 1.0 on sw2, serial ACME00002",
	} {
		p, err := platform.NewPlatform("cisco_iosxe", "127.0.0.1",
			options.WithAuthNoStrictKey(), options.WithAuthUsername("admin"), options.WithAuthPassword("admin"),
			options.WithAuthSecondary(secret), options.WithPort(f.Port(i)),
			options.WithTransportType(transport.StandardTransport),
			options.WithTimeoutSocket(5*time.Second), options.WithTimeoutOps(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.GetNetworkDriver()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Open(); err != nil {
			t.Fatalf("open: %v", err)
		}
		r, err := d.SendCommand("show version")
		if err != nil || r.Failed != nil || !strings.HasPrefix(r.Result, want) {
			t.Fatalf("device %d show version: %v %v %q", i, err, r.Failed, r.Result)
		}
		r, err = d.SendCommand("show acme neighbors")
		if err != nil || r.Failed != nil {
			t.Fatalf("neighbors: %v %v", err, r.Failed)
		}
		// device 0 has one neighbor (sw2), device 1 two (sw3 and sw1).
		if n := strings.Count(r.Result, " up via GigabitEthernet"); n != i+1 {
			t.Errorf("device %d neighbors: %q", i, r.Result)
		}
		if _, err := d.SendConfigs([]string{"interface Loopback9", " description from scrapligo"}); err != nil {
			t.Fatal(err)
		}
		r, err = d.SendCommand("show running-config")
		if err != nil || !strings.Contains(r.Result, "! ACME config of sw") || !strings.Contains(r.Result, " description from scrapligo") {
			t.Fatalf("running-config: %v %q", err, r.Result)
		}
		r, err = d.SendCommand("show bogus")
		if err != nil || r.Failed == nil {
			t.Fatalf("invalid command not failed: %v %q", err, r.Result)
		}
		_ = d.Close()
	}
}

// TestFolderPlatformErrors: a broken definition is refused at Start with ErrPlatform.
func TestFolderPlatformErrors(t *testing.T) {
	for name, edit := range map[string]func(map[string]string){
		"unknown handler":  func(m map[string]string) { m["platform.yaml"] += "  - {cmd: foo, handler: nope}\n" },
		"missing template": func(m map[string]string) { delete(m, "version.tmpl") },
		"unknown grammar": func(m map[string]string) {
			m["platform.yaml"] = strings.Replace(m["platform.yaml"], "grammar: ios", "grammar: junos", 1)
		},
		"bad template":    func(m map[string]string) { m["neighbors.tmpl"] = "{{range}}" },
		"unknown feature": func(m map[string]string) { m["platform.yaml"] += "features: {teleport: true}\n" },
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range acmeFolder {
				files[k] = v
			}
			edit(files)
			root := writeAcme(t, files)
			_, err := devsim.Start(context.Background(), devsim.Options{Platform: "acme", Platforms: os.DirFS(root), Devices: 1})
			if !errors.Is(err, devsim.ErrPlatform) {
				t.Fatalf("err = %v, want ErrPlatform", err)
			}
		})
	}
}
