package driver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gsalt/gsalt/internal/testutil"
)

// fakeJunos is an in-process NETCONF 1.0 server (SSH subsystem
// "netconf") announcing Junos's capabilities and answering Junos XML API
// RPCs from testdata/junos plus a little configuration state, so the
// driver's Junos code paths run over a real SSH connection through
// scrapligo. It records the RPCs it receives.
type fakeJunos struct {
	t        *testing.T
	addr     string
	password string

	mu        sync.Mutex
	rpcs      []string // the operation elements received, rendered compactly
	committed string
	candidate string
	previous  string
	comment   string // the last commit's comment

	// fixtures, when set, is a NAPALM junos case folder: operational RPCs
	// are answered from its <rpc>.xml; missing lists the files it lacked.
	fixtures string
	missing  []string
}

const fakeJunosHello = `<?xml version="1.0" encoding="UTF-8"?>
<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">
  <capabilities>
    <capability>urn:ietf:params:netconf:base:1.0</capability>
    <capability>urn:ietf:params:netconf:capability:candidate:1.0</capability>
    <capability>urn:ietf:params:netconf:capability:confirmed-commit:1.0</capability>
    <capability>urn:ietf:params:netconf:capability:validate:1.0</capability>
    <capability>urn:ietf:params:netconf:capability:url:1.0?scheme=http,ftp,file</capability>
    <capability>urn:ietf:params:xml:ns:netconf:base:1.0</capability>
    <capability>http://xml.juniper.net/netconf/junos/1.0</capability>
    <capability>http://xml.juniper.net/dmi/system/1.0</capability>
  </capabilities>
  <session-id>4242</session-id>
</hello>
]]>]]>`

func startFakeJunos(t *testing.T) *fakeJunos {
	t.Helper()
	f := &fakeJunos{t: t, password: "junos-pw", committed: "system {\n    host-name vsrx1;\n}"}
	f.candidate = f.committed
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if c.User() == "lab" && string(pw) == f.password {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	cfg.AddHostKey(signer)
	f.addr = testutil.ServeTCP(t, func(c net.Conn) { f.serveConn(c, cfg) }).Addr().String()
	return f
}

func (f *fakeJunos) serveConn(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for r := range creqs {
				ok := r.Type == "subsystem" && len(r.Payload) > 4 && string(r.Payload[4:]) == "netconf"
				_ = r.Reply(ok, nil)
				if ok {
					go f.serveNetconf(ch)
				}
			}
		}()
	}
}

// serveNetconf speaks NETCONF 1.0 (]]>]]> framing) on ch.
func (f *fakeJunos) serveNetconf(ch ssh.Channel) {
	defer ch.Close()
	if _, err := io.WriteString(ch, fakeJunosHello); err != nil {
		return
	}
	var buf []byte
	tmp := make([]byte, 4096)
	helloDone := false
	for {
		n, err := ch.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:n]...)
		for {
			i := bytes.Index(buf, []byte("]]>]]>"))
			if i < 0 {
				break
			}
			msg := string(buf[:i])
			buf = buf[i+6:]
			if !helloDone {
				helloDone = true
				continue
			}
			reply, closeAfter := f.answer(msg)
			if _, err := io.WriteString(ch, reply+"]]>]]>"); err != nil || closeAfter {
				return
			}
		}
	}
}

func (f *fakeJunos) testdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "junos", name+".xml"))
	if err != nil {
		f.t.Errorf("fake junos: %v", err)
	}
	return string(b)
}

func fakeRPCError(tag, msg string) string {
	return "<rpc-error><error-type>protocol</error-type><error-tag>" + tag +
		"</error-tag><error-severity>error</error-severity><error-message>" + escapeXML(msg) + "</error-message></rpc-error>"
}

// answer returns the rpc-reply to one message.
func (f *fakeJunos) answer(msg string) (string, bool) {
	root, err := parseXML(msg)
	rpc := root.child("rpc")
	if err != nil || rpc == nil || len(rpc.kids) == 0 {
		return `<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">` + fakeRPCError("malformed-message", "bad rpc") + `</rpc-reply>`, false
	}
	op := rpc.kids[0]
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rpcs = append(f.rpcs, fakeCompact(renderXML(op)))
	body, closeAfter := f.handle(op)
	return fmt.Sprintf(`<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" xmlns:junos="http://xml.juniper.net/junos/20.4R0/junos" message-id="%s">%s</rpc-reply>`,
		rpc.attr("message-id"), body), closeAfter
}

func (f *fakeJunos) handle(op *xnode) (string, bool) {
	ok := "<ok/>"
	if f.fixtures != "" {
		switch op.local {
		case "lock", "unlock", "close-session", "discard-changes", "load-configuration", "commit-configuration":
		default:
			name := napalmJunosFixtureName(op)
			b, err := os.ReadFile(filepath.Join(f.fixtures, name))
			if err != nil {
				f.missing = append(f.missing, name)
				return fakeRPCError("operation-failed", "no fixture "+name), false
			}
			body := string(b)
			if strings.HasSuffix(name, ".txt") {
				// PyEZ's cli(): the text of a <command format="text">.
				return "<output>\n" + escapeXML(body) + "</output>", false
			}
			if i := strings.Index(body, "?>"); strings.HasPrefix(strings.TrimSpace(body), "<?xml") && i >= 0 {
				body = body[i+2:]
			}
			return body, false
		}
	}
	switch op.local {
	case "get-software-information", "get-chassis-inventory", "get-system-uptime-information",
		"get-arp-table-information", "get-lldp-neighbors-information":
		return f.testdata(op.local), false
	case "get-interface-information":
		if op.child("terse") != nil {
			return f.testdata("get-interface-information-terse"), false
		}
		return f.testdata(op.local), false
	case "lock", "unlock", "close-session":
		return ok, op.local == "close-session"
	case "get":
		return "<data/>", false
	case "discard-changes":
		f.candidate = f.committed
		return ok, false
	case "command":
		if strings.TrimSpace(op.text) == "show version" {
			return "<output>\nHostname: vsrx1\nModel: vsrx\nJunos: 20.4R3.8\n</output>", false
		}
		return fakeRPCError("operation-failed", "syntax error, expecting <command>"), false
	case "get-configuration":
		switch {
		case op.attr("compare") == "rollback":
			diff := ""
			if f.candidate != f.committed {
				diff = "\n[edit system]\n-  host-name " + "vsrx1;\n+  " + strings.TrimSpace(f.candidate) + "\n"
			}
			return "<configuration-information><configuration-output>" + escapeXML(diff) + "</configuration-output></configuration-information>", false
		case op.attr("format") == "text":
			text := f.committed
			if op.attr("database") == "candidate" {
				text = f.candidate
			}
			return "<configuration-information><configuration-text>\n" + escapeXML(text) + "\n</configuration-text></configuration-information>", false
		case op.find("domain-name") != nil:
			return `<configuration junos:changed-seconds="1700000000"><system><domain-name>example.net</domain-name></system></configuration>`, false
		case op.find("ntp") != nil:
			return `<configuration><system><ntp><server><name>192.0.2.10</name></server><server><name>ntp.example.net</name><prefer/></server><peer><name>192.0.2.20</name></peer></ntp></system></configuration>`, false
		}
		return "<configuration/>", false
	case "load-configuration":
		if op.attr("rollback") == "1" {
			f.candidate = f.previous
			return "<load-configuration-results><ok/></load-configuration-results>", false
		}
		text := strings.TrimSpace(op.allText())
		if strings.Contains(text, "bogus") {
			return "<load-configuration-results>" + strings.Replace(fakeRPCError("invalid-value", "syntax error"), "<error-severity>", "<error-path>[edit]</error-path><error-severity>", 1) + "</load-configuration-results>", false
		}
		f.candidate = text
		return "<load-configuration-results><ok/></load-configuration-results>", false
	case "commit-configuration":
		f.previous, f.committed = f.committed, f.candidate
		f.comment = op.value("log")
		if op.child("confirmed") != nil {
			f.comment = "commit confirmed, rollback in " + op.value("confirm-timeout") + "mins"
		}
		return "<commit-results><routing-engine junos:style=\"normal\"><name>re0</name><commit-success/></routing-engine></commit-results>", false
	case "get-commit-revision-information":
		c := ""
		if f.comment != "" {
			c = "<comment>" + escapeXML(f.comment) + "</comment>"
		}
		return `<commit-revision-information><date-time junos:seconds="1700000000">2023-11-14 22:13:20 UTC</date-time><revision>re0-1700000000-7</revision>` + c + `</commit-revision-information>`, false
	}
	return fakeRPCError("operation-not-supported", "unknown RPC "+op.local), false
}

// napalmJunosFixtureName is the file NAPALM's junos test double reads for
// one RPC: get_config__<option>_<value>__... for a configuration read by
// options, the sanitized filter for a filtered one, else <rpc-name>.xml.
func napalmJunosFixtureName(op *xnode) string {
	switch {
	case op.local == "command" && op.attr("format") == "text":
		// The test double's cli(): <sanitized command>.txt.
		return napalmSanitize(strings.TrimSpace(op.text)) + ".txt"
	case op.local == "command":
		// An RPC sent as an element (ping, traceroute): its sanitized text.
		return napalmSanitize(fakeCompact(renderXML(op))) + ".xml"
	case op.local != "get-configuration":
		// The test double drops the RPC's arguments but instance, which it
		// appends to the name.
		return op.local + op.value("instance") + ".xml"
	}
	if len(op.kids) > 0 {
		return napalmSanitize(strings.ReplaceAll(fakeCompact(renderXML(op.kids[0])), "\n", "")) + ".xml"
	}
	var opts []string
	for _, a := range op.attrs {
		opts = append(opts, a.Name.Local+"_"+a.Value)
	}
	slices.Sort(opts)
	name := "get_config__" + strings.Join(opts, "__")
	return name[:min(len(name), 150)] + ".xml"
}

// fakeCompact joins the lines of a rendering without their indentation.
func fakeCompact(s string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(s, "\n") {
		b.WriteString(strings.TrimLeft(l, " "))
	}
	return b.String()
}

// sent returns and forgets the RPCs received so far.
func (f *fakeJunos) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.rpcs
	f.rpcs = nil
	return out
}

func (f *fakeJunos) open(t *testing.T, opt map[string]any) *junos {
	t.Helper()
	host, port, _ := net.SplitHostPort(f.addr)
	p, _ := strconv.Atoi(port)
	d, err := NewJunos(Options{Host: host, Port: p, Username: "lab", Password: f.password, Timeout: 10 * time.Second, OptionalArgs: opt})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Open(ctx); err != nil {
		t.Fatalf("open fake junos: %v", err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d.(*junos)
}

func TestJunosFakeDevice(t *testing.T) {
	f := startFakeJunos(t)
	d := f.open(t, map[string]any{"hello_delay": 0})
	ctx := ctxT(t)
	if !d.n.isJunos() || d.n.nc.SelectedVersion != "1.0" {
		t.Fatalf("junos %v, version %s", d.n.isJunos(), d.n.nc.SelectedVersion)
	}
	if c := d.Capabilities(); c != (Capabilities{HasConfirmedCommit: true, CommitMessage: true, CandidateConfig: true}) {
		t.Errorf("capabilities %+v", c)
	}

	t.Run("facts", func(t *testing.T) {
		fa, err := d.GetFacts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := Facts{Vendor: "Juniper", Model: "VSRX", SerialNumber: "BB1234567890", OSVersion: "20.4R3.8",
			Hostname: "vsrx1", FQDN: "vsrx1.example.net", Uptime: 259200, InterfaceList: []string{"ge-0/0/0", "xe-0/0/1", "lo0"}}
		if !reflect.DeepEqual(fa, want) {
			t.Errorf("facts\n got %+v\nwant %+v", fa, want)
		}
	})

	t.Run("getters", func(t *testing.T) {
		ifs, err := d.GetInterfaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ifs) != 5 || ifs["xe-0/0/1"].Speed != 10000 || !ifs["ge-0/0/0.0"].IsUp {
			t.Errorf("interfaces %+v", ifs)
		}
		ips, err := d.GetInterfacesIP(ctx)
		if err != nil || len(ips) != 2 || ips["lo0.0"].IPv4["192.0.2.255"].PrefixLength != 32 {
			t.Errorf("interfaces ip %+v %v", ips, err)
		}
		arp, err := d.GetArpTable(ctx, "")
		if err != nil || len(arp) != 2 || arp[0].Age != 1187 {
			t.Errorf("arp %+v %v", arp, err)
		}
		if _, err := d.GetArpTable(ctx, "mgmt"); !errors.Is(err, ErrNotSupported) {
			t.Errorf("arp vrf: %v", err)
		}
		lldp, err := d.GetLLDPNeighbors(ctx)
		if err != nil || !reflect.DeepEqual(lldp, map[string][]LLDPNeighbor{
			"ge-0/0/0": {{Hostname: "core1", Port: "xe-1/0/0"}}, "ge-0/0/2": {{Hostname: "leaf2", Port: "Ethernet1"}},
		}) {
			t.Errorf("lldp %+v %v", lldp, err)
		}
		srv, err := d.GetNTPServers(ctx)
		if err != nil || !reflect.DeepEqual(srv, map[string]NTPServer{"192.0.2.10": {}, "ntp.example.net": {}}) {
			t.Errorf("ntp servers %v %v", srv, err)
		}
		peers, err := d.GetNTPPeers(ctx)
		if err != nil || !reflect.DeepEqual(peers, map[string]NTPPeer{"192.0.2.20": {}}) {
			t.Errorf("ntp peers %v %v", peers, err)
		}
		out, err := d.Cli(ctx, []string{"show version"})
		if err != nil || out["show version"] != "Hostname: vsrx1\nModel: vsrx\nJunos: 20.4R3.8" {
			t.Errorf("cli %q %v", out, err)
		}
		if _, err := d.Cli(ctx, []string{"show bogus"}); !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("cli bad command: %v", err)
		}
		// The getters beyond the base set send NAPALM junos's RPCs (their
		// values are checked against NAPALM's fixtures in TestNAPALMFixtures;
		// this fake lacks most of these RPCs).
		f.sent()
		for _, c := range []struct {
			name string
			call func() error
			want string
		}{
			{"ntp stats", func() error { _, err := d.GetNTPStats(ctx); return err }, `<command format="text">show ntp associations no-resolve</command>`},
			{"ping", func() error { _, err := d.Ping(ctx, PingOptions{Destination: "192.0.2.1"}); return err }, `<command>ping 192.0.2.1 ttl 255 wait 2 size 100 count 5</command>`},
			{"traceroute", func() error { _, err := d.Traceroute(ctx, TracerouteOptions{Destination: "192.0.2.1"}); return err }, `<command>traceroute 192.0.2.1 ttl 255 wait 2</command>`},
			{"environment", func() error { _, err := d.GetEnvironment(ctx); return err }, `<get-environment-information/>`},
			{"mac table", func() error { _, err := d.GetMACAddressTable(ctx); return err }, `<get-ethernet-switching-table-information><extensive/></get-ethernet-switching-table-information>`},
			{"bgp", func() error { _, err := d.GetBGPNeighbors(ctx); return err }, `<get-instance-information/>`},
			{"lldp detail", func() error { _, err := d.GetLLDPNeighborsDetail(ctx, "ge-0/0/0"); return err }, `<get-lldp-interface-neighbors><interface-device>ge-0/0/0</interface-device></get-lldp-interface-neighbors>`},
		} {
			err := c.call()
			got := f.sent()
			if !slices.Contains(got, c.want) {
				t.Errorf("%s: rpcs %q (error %v), want %q among them", c.name, got, err, c.want)
			}
			if err == nil || !errors.Is(err, ErrCommand) && !errors.Is(err, ErrNotSupported) {
				t.Errorf("%s: the fake lacks the RPC, want its rpc-error, got %v", c.name, err)
			}
		}
		f.sent()
	})

	t.Run("workflow", func(t *testing.T) {
		if err := d.LoadMergeCandidate(ctx, "system {\n    host-name vsrx2;\n}"); err != nil {
			t.Fatal(err)
		}
		diff, err := d.CompareConfig(ctx)
		if err != nil || !strings.HasPrefix(diff, "[edit system]") {
			t.Errorf("compare %q %v", diff, err)
		}
		if err := d.CommitConfig(ctx, "via <gsalt>", 0); err != nil {
			t.Fatal(err)
		}
		want := []string{
			`<lock><target><candidate/></target></lock>`,
			`<load-configuration action="merge" format="text"><configuration-text>system {host-name vsrx2;}</configuration-text></load-configuration>`,
			`<get-configuration compare="rollback" format="text" rollback="0"/>`,
			`<commit-configuration><log>via &lt;gsalt&gt;</log></commit-configuration>`,
			`<unlock><target><candidate/></target></unlock>`,
		}
		if got := f.sent(); !reflect.DeepEqual(got, want) {
			t.Errorf("rpcs\n got %q\nwant %q", got, want)
		}
		c, err := d.GetConfig(ctx, "all")
		if err != nil || c.Running != "\nsystem {\n    host-name vsrx2;\n}\n" || c.Startup != "" {
			t.Errorf("get_config %+v %v", c, err)
		}
		if err := d.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if c, _ := d.GetConfig(ctx, "running"); !strings.Contains(c.Running, "vsrx1") {
			t.Errorf("rollback: %q", c.Running)
		}
		f.sent()
		// set commands, XML, replace.
		if err := d.LoadMergeCandidate(ctx, "set system host-name vsrx3"); err != nil {
			t.Fatal(err)
		}
		if err := d.LoadReplaceCandidate(ctx, `<configuration><system><host-name>vsrx4</host-name></system></configuration>`); err != nil {
			t.Fatal(err)
		}
		if err := d.LoadMergeCandidate(ctx, `<config><configuration><system><location><building>b1</building></location></system></configuration></config>`); err != nil {
			t.Fatal(err)
		}
		if err := d.LoadMergeCandidate(ctx, `{"configuration": {"system": {"host-name": "vsrx5"}}}`); err != nil {
			t.Fatal(err)
		}
		if err := d.LoadMergeCandidate(ctx, "bogus;"); !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("bad config: %v", err)
		}
		if err := d.DiscardConfig(ctx); err != nil {
			t.Fatal(err)
		}
		want = []string{
			`<lock><target><candidate/></target></lock>`,
			`<load-configuration action="set" format="text"><configuration-set>set system host-name vsrx3</configuration-set></load-configuration>`,
			`<load-configuration action="override" format="xml"><configuration><system><host-name>vsrx4</host-name></system></configuration></load-configuration>`,
			`<load-configuration action="merge" format="xml"><configuration><system><location><building>b1</building></location></system></configuration></load-configuration>`,
			`<load-configuration action="merge" format="json"><configuration-json>{"configuration": {"system": {"host-name": "vsrx5"}}}</configuration-json></load-configuration>`,
			`<load-configuration action="merge" format="text"><configuration-text>bogus;</configuration-text></load-configuration>`,
			`<discard-changes/>`,
			`<unlock><target><candidate/></target></unlock>`,
		}
		if got := f.sent(); !reflect.DeepEqual(got, want) {
			t.Errorf("rpcs\n got %q\nwant %q", got, want)
		}
	})

	t.Run("commit-confirmed", func(t *testing.T) {
		if err := d.ConfirmCommit(ctx); !errors.Is(err, ErrCommand) {
			t.Errorf("confirm without pending: %v", err)
		}
		if err := d.LoadMergeCandidate(ctx, "set system host-name vsrx6"); err != nil {
			t.Fatal(err)
		}
		if err := d.CommitConfig(ctx, "", 90); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("revert_in 90: %v", err)
		}
		if err := d.LoadMergeCandidate(ctx, "set system host-name vsrx6"); err != nil {
			t.Fatal(err)
		}
		f.sent()
		if err := d.CommitConfig(ctx, "", 120); err != nil {
			t.Fatal(err)
		}
		if got := f.sent(); len(got) < 1 || got[0] != `<commit-configuration><confirmed/><confirm-timeout>2</confirm-timeout></commit-configuration>` {
			t.Errorf("rpcs %q", got)
		}
		if p, err := d.HasPendingCommit(ctx); err != nil || !p {
			t.Errorf("pending %v %v", p, err)
		}
		if err := d.ConfirmCommit(ctx); err != nil {
			t.Fatal(err)
		}
		if p, err := d.HasPendingCommit(ctx); err != nil || p {
			t.Errorf("pending after confirm %v %v", p, err)
		}
	})

	t.Run("auth", func(t *testing.T) {
		host, port, _ := net.SplitHostPort(f.addr)
		p, _ := strconv.Atoi(port)
		bad, _ := NewJunos(Options{Host: host, Port: p, Username: "lab", Password: "nope", Timeout: 5 * time.Second})
		if err := bad.Open(ctx); !errors.Is(err, ErrAuth) {
			t.Errorf("wrong password: %v", err)
		}
	})
}
