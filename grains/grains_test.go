package grains

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/internal/netinfo"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/version"
	"github.com/gsalt/gsalt/wire/payload"
)

// fakeCmd is the canned result of a command in a fixture host.
type fakeCmd struct {
	out  string
	code int
}

// fixtureHost returns a host reading files under a temporary root holding
// files, with only the commands in cmds installed.
func fixtureHost(t *testing.T, files map[string]string, cmds map[string]fakeCmd) *host {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newHost(Options{ID: "m1"})
	h.root = root
	h.getenv = func(string) string { return "" }
	h.lookPath = func(name string) (string, error) {
		base := filepath.Base(name)
		for k := range cmds {
			if strings.Fields(k)[0] == base {
				return "/usr/bin/" + base, nil
			}
		}
		return "", errors.New("not found")
	}
	h.run = func(_ context.Context, name string, args ...string) (string, int, error) {
		key := strings.Join(append([]string{filepath.Base(name)}, args...), " ")
		if c, ok := cmds[key]; ok {
			return c.out, c.code, nil
		}
		return "", -1, fmt.Errorf("no fake for %q", key)
	}
	h.net = func() ([]iface, error) { return nil, nil }
	return h
}

func osRelease(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "%s=%q\n", kv[i], kv[i+1])
	}
	return b.String()
}

// TestDistribution checks the os grains against the expectations of
// Salt's own unit tests (tests/pytests/unit/grains/test_core.py).
func TestDistribution(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  map[string]any
	}{
		{"debian 11", map[string]string{"/etc/os-release": osRelease(
			"PRETTY_NAME", "Debian GNU/Linux 11 (bullseye)", "NAME", "Debian GNU/Linux", "VERSION_ID", "11",
			"VERSION", "11 (bullseye)", "VERSION_CODENAME", "bullseye", "ID", "debian")},
			map[string]any{"os": "Debian", "os_family": "Debian", "oscodename": "bullseye", "osfullname": "Debian GNU/Linux",
				"osrelease": "11", "osrelease_info": []any{int64(11)}, "osmajorrelease": int64(11), "osfinger": "Debian-11"}},
		{"ubuntu focal", map[string]string{"/etc/os-release": osRelease(
			"NAME", "Ubuntu", "VERSION", "20.04.3 LTS (Focal Fossa)", "ID", "ubuntu", "ID_LIKE", "debian",
			"PRETTY_NAME", "Ubuntu 20.04.3 LTS", "VERSION_ID", "20.04", "VERSION_CODENAME", "focal", "UBUNTU_CODENAME", "focal"),
			"/etc/lsb-release": "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=20.04\nDISTRIB_CODENAME=focal\nDISTRIB_DESCRIPTION=\"Ubuntu 20.04.3 LTS\"\n"},
			map[string]any{"os": "Ubuntu", "os_family": "Debian", "oscodename": "focal", "osfullname": "Ubuntu",
				"osrelease": "20.04", "osrelease_info": []any{int64(20), int64(4)}, "osmajorrelease": int64(20), "osfinger": "Ubuntu-20.04",
				"lsb_distrib_id": "Ubuntu", "lsb_distrib_release": "20.04", "lsb_distrib_codename": "focal", "lsb_distrib_description": "Ubuntu 20.04.3 LTS"}},
		{"rocky 8", map[string]string{"/etc/os-release": osRelease(
			"NAME", "Rocky Linux", "VERSION", "8.5 (Green Obsidian)", "ID", "rocky", "ID_LIKE", "rhel centos fedora",
			"VERSION_ID", "8.5", "PRETTY_NAME", "Rocky Linux 8.5 (Green Obsidian)", "CPE_NAME", "cpe:/o:rocky:rocky:8.5:GA")},
			map[string]any{"os": "Rocky", "os_family": "RedHat", "oscodename": "Green Obsidian", "osfullname": "Rocky Linux",
				"osrelease": "8.5", "osrelease_info": []any{int64(8), int64(5)}, "osmajorrelease": int64(8), "osfinger": "Rocky Linux-8"}},
		{"almalinux 8", map[string]string{"/etc/os-release": osRelease(
			"NAME", "AlmaLinux", "ID", "almalinux", "PRETTY_NAME", "AlmaLinux 8.5 (Arctic Sphynx)", "VERSION", "8.5 (Arctic Sphynx)",
			"ID_LIKE", "rhel centos fedora", "VERSION_ID", "8.5")},
			map[string]any{"os": "AlmaLinux", "os_family": "RedHat", "oscodename": "Arctic Sphynx", "osfullname": "AlmaLinux",
				"osrelease": "8.5", "osrelease_info": []any{int64(8), int64(5)}, "osmajorrelease": int64(8), "osfinger": "AlmaLinux-8"}},
		{"mendel", map[string]string{"/etc/os-release": osRelease(
			"PRETTY_NAME", "Mendel GNU/Linux 5 (Eagle)", "NAME", "Mendel GNU/Linux", "ID", "mendel", "ID_LIKE", "debian",
			"VERSION_CODENAME", "eagle")},
			map[string]any{"os": "Mendel", "os_family": "Debian", "oscodename": "eagle", "osfullname": "Mendel GNU/Linux",
				"osrelease": "5", "osrelease_info": []any{int64(5)}, "osmajorrelease": int64(5), "osfinger": "Mendel GNU/Linux-5"}},
		{"astra orel", map[string]string{"/etc/os-release": osRelease(
			"PRETTY_NAME", "Astra Linux (Orel 2.12.43)", "NAME", "Astra Linux (Orel)", "ID", "astra", "ID_LIKE", "debian",
			"VARIANT_ID", "orel", "VARIANT", "Orel", "VERSION_ID", "2.12.43", "VERSION_CODENAME", "orel")},
			map[string]any{"os": "AstraLinuxCE", "os_family": "Debian", "oscodename": "orel", "osfullname": "Astra Linux (Orel)",
				"osrelease": "2.12.43", "osrelease_info": []any{int64(2), int64(12), int64(43)}, "osmajorrelease": int64(2),
				"osfinger": "Astra Linux (Orel)-2"}},
		{"centos 8 (legacy, release file version)", map[string]string{"/etc/os-release": osRelease(
			"NAME", "CentOS Linux", "VERSION", "8 (Core)", "VERSION_ID", "8", "PRETTY_NAME", "CentOS Linux 8 (Core)",
			"ID", "centos", "CPE_NAME", "cpe:/o:centos:centos:8"),
			"/etc/centos-release": "CentOS Linux release 8.1.1911 (Core)\n"},
			map[string]any{"os": "CentOS", "os_family": "RedHat", "oscodename": "CentOS Linux 8 (Core)", "osfullname": "CentOS Linux",
				"osrelease": "8.1.1911", "osrelease_info": []any{int64(8), int64(1), int64(1911)}, "osmajorrelease": int64(8),
				"osfinger": "CentOS Linux-8", "lsb_distrib_id": "CentOS Linux", "lsb_distrib_codename": "CentOS Linux 8 (Core)"}},
		{"centos stream 8", map[string]string{"/etc/os-release": osRelease(
			"NAME", "CentOS Stream", "VERSION", "8", "VERSION_ID", "8", "PRETTY_NAME", "CentOS Stream 8",
			"ID", "centos", "CPE_NAME", "cpe:/o:centos:centos:8")},
			map[string]any{"os": "CentOS Stream", "os_family": "RedHat", "oscodename": "CentOS Stream 8", "osfullname": "CentOS Stream",
				"osrelease": "8", "osrelease_info": []any{int64(8)}, "osmajorrelease": int64(8), "osfinger": "CentOS Stream-8",
				"lsb_distrib_id": "CentOS Stream", "lsb_distrib_release": "8", "lsb_distrib_codename": "CentOS Stream 8"}},
		{"alibaba cloud linux 2", map[string]string{"/etc/os-release": osRelease(
			"NAME", "Alibaba Cloud Linux (Aliyun Linux)", "VERSION", "2.1903 LTS (Hunting Beagle)", "VERSION_ID", "2.1903",
			"PRETTY_NAME", "Alibaba Cloud Linux (Aliyun Linux) 2.1903 LTS (Hunting Beagle)", "ID", "alinux")},
			map[string]any{"os": "Alinux", "os_family": "RedHat",
				"oscodename": "Alibaba Cloud Linux (Aliyun Linux) 2.1903 LTS (Hunting Beagle)",
				"osfullname": "Alibaba Cloud Linux (Aliyun Linux)", "osrelease": "2.1903",
				"osrelease_info": []any{int64(2), int64(1903)}, "osmajorrelease": int64(2), "osfinger": "Alibaba Cloud Linux (Aliyun Linux)-2"}},
		{"opensuse leap 42.1", map[string]string{"/etc/os-release": osRelease(
			"NAME", "openSUSE Leap", "VERSION", "42.1", "VERSION_ID", "42.1", "PRETTY_NAME", "openSUSE Leap 42.1 (x86_64)",
			"ID", "opensuse", "CPE_NAME", "cpe:/o:opensuse:opensuse:42.1")},
			map[string]any{"os": "SUSE", "os_family": "Suse", "oscodename": "openSUSE Leap 42.1 (x86_64)", "osfullname": "Leap",
				"osrelease": "42.1", "osrelease_info": []any{int64(42), int64(1)}, "osmajorrelease": int64(42), "osfinger": "Leap-42"}},
		{"opensuse tumbleweed", map[string]string{"/etc/os-release": osRelease(
			"NAME", "openSUSE", "VERSION", "Tumbleweed", "VERSION_ID", "20160504",
			"PRETTY_NAME", "openSUSE Tumbleweed (20160504) (x86_64)", "ID", "opensuse", "CPE_NAME", "cpe:/o:opensuse:opensuse:20160504")},
			map[string]any{"os": "SUSE", "os_family": "Suse", "oscodename": "openSUSE Tumbleweed (20160504) (x86_64)",
				"osfullname": "Tumbleweed", "osrelease": "20160504", "osrelease_info": []any{int64(20160504)},
				"osmajorrelease": int64(20160504), "osfinger": "Tumbleweed-20160504"}},
		{"parrot", map[string]string{"/etc/os-release": osRelease(
			"PRETTY_NAME", "Parrot OS 5.1 (Electro Ara)", "NAME", "Parrot OS", "VERSION_ID", "5.1", "VERSION", "5.1 (Electro Ara)",
			"VERSION_CODENAME", "ara", "ID", "parrot", "ID_LIKE", "debian")},
			map[string]any{"os": "Parrot OS", "os_family": "Debian", "oscodename": "ara", "osfullname": "Parrot OS",
				"osrelease": "5.1", "osrelease_info": []any{int64(5), int64(1)}, "osmajorrelease": int64(5), "osfinger": "Parrot OS-5"}},
		{"rhel 9 codename from VERSION", map[string]string{"/etc/os-release": osRelease(
			"NAME", "Red Hat Enterprise Linux", "VERSION", "9.2 (Plow)", "ID", "rhel", "ID_LIKE", "fedora", "VERSION_ID", "9.2",
			"PRETTY_NAME", "Red Hat Enterprise Linux 9.2 (Plow)", "CPE_NAME", "cpe:/o:redhat:enterprise_linux:9::baseos")},
			map[string]any{"os": "RedHat", "os_family": "RedHat", "oscodename": "Plow", "osfullname": "Red Hat Enterprise Linux",
				"osrelease": "9.2", "osrelease_info": []any{int64(9), int64(2)}, "osmajorrelease": int64(9),
				"osfinger": "Red Hat Enterprise Linux-9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fixtureHost(t, tc.files, nil)
			g := h.distribution()
			if rel := g.Str("osrelease"); rel != "" {
				h.mergeInto(g, osreleaseData(g.Str("os"), g.Str("osfullname"), rel))
			}
			for k, want := range tc.want {
				got, ok := g.Get(k)
				if !ok {
					t.Errorf("%s missing (grains %v)", k, g.Keys())
					continue
				}
				if d := vectors.Equal(got, want); d != "" {
					t.Errorf("%s: %s", k, d)
				}
			}
		})
	}
}

func TestParseOSReleaseQuoting(t *testing.T) {
	rel := parseOSRelease("NAME='My \\\"OS\\\"'\nID=plain\nX=\"unterminated\nBAD LINE\nY=\"a\\$b\"\n")
	want := map[string]string{"NAME": `My "OS"`, "ID": "plain", "X": `"unterminated`, "Y": "a$b", "PRETTY_NAME": "Linux"}
	for k, v := range want {
		if rel[k] != v {
			t.Errorf("%s = %q, want %q", k, rel[k], v)
		}
	}
}

func TestServerIDHash(t *testing.T) {
	// Values printed by `PYTHONHASHSEED=0 python3.10 / python3.11 -c
	// 'print(abs(hash(s) % 2**31))'`.
	tests := []struct {
		id       string
		py310    int64
		py311    int64
		fullHash int64 // python3.10 hash()
	}{
		{"testmin", 1671282960, 297157351, 2116746479994257680},
		{"", 0, 0, 0},
		{"ä", 1491671612, 1473713944, 1411423585358649916},
		{"€x", 789893591, 1112449939, -3982534550712167977},
		{"😀", 984142424, 1822689068, 2694534307785527896},
		{"minion-01.example.com", 1493608126, 1623741462, 2381970502870017726},
	}
	for _, tc := range tests {
		if got := serverIDHash(tc.id, 2); got != tc.py310 {
			t.Errorf("siphash24(%q) = %d, want %d", tc.id, got, tc.py310)
		}
		if got := serverIDHash(tc.id, 1); got != tc.py311 {
			t.Errorf("siphash13(%q) = %d, want %d", tc.id, got, tc.py311)
		}
		if got := py.HashStr(tc.id, 2); got != tc.fullHash {
			t.Errorf("hash(%q) = %d, want %d", tc.id, got, tc.fullHash)
		}
	}
}

// mapGetter is a Getter over a Go map.
type mapGetter map[string]any

func (m mapGetter) Get(k string) (any, bool) { v, ok := m[k]; return v, ok }

func TestServerIDCRC(t *testing.T) {
	// zlib.adler32(b"testmin") and zlib.crc32(b"testmin").
	for _, tc := range []struct {
		algo string
		want int64
	}{{"adler32", 203883269}, {"crc32", 3647462585}} {
		h := newHost(Options{ID: "testmin", Opts: mapGetter{"server_id_use_crc": tc.algo}})
		if got, _ := h.serverID().Int("server_id"); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.algo, got, tc.want)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu vme de\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu vme de\n"
	arm := "Processor\t: ARMv6-compatible processor rev 7 (v6l)\nBogoMIPS\t: 697.95\nFeatures\t: swp half thumb\n"
	s390 := "vendor_id       : IBM/S390\n# processors    : 2\nbogomips per cpu: 3033.00\n"
	ppc := "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 2750.000000MHz\n"
	tests := []struct {
		name, in string
		want     *payload.Map
	}{
		{"x86", x86, payload.NewMap("num_cpus", int64(2), "cpu_model", "Intel(R) Xeon(R)", "cpu_flags", []any{"fpu", "vme", "de"})},
		{"arm", arm, payload.NewMap("num_cpus", int64(1), "cpu_model", "ARMv6", "cpu_flags", []any{"swp", "half", "thumb"})},
		{"s390", s390, payload.NewMap("num_cpus", int64(2), "cpu_model", "IBM/S390", "cpu_flags", []any{})},
		{"ppc64le", ppc, payload.NewMap("num_cpus", int64(1), "cpu_model", "POWER9 (architected), altivec supported", "cpu_flags", []any{})},
		{"empty", "", payload.NewMap("num_cpus", int64(0), "cpu_model", "Unknown", "cpu_flags", []any{})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := vectors.Equal(parseCPUInfo(tc.in), tc.want); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestParseResolv(t *testing.T) {
	in := `# generated
nameserver 10.0.0.1 # primary
nameserver 10.0.0.1
nameserver 2001:db8::53
nameserver bogus
nameserver
domain example.com
search a.example b.example ; c.example
sortlist 130.155.160.0/255.255.240.0 130.155.0.0 192.168.1.0/24 10.1.2.3/8
options ndots:2 timeout:1
options rotate
`
	want := payload.NewMap(
		"nameservers", []any{"10.0.0.1", "2001:db8::53"},
		"ip4_nameservers", []any{"10.0.0.1"},
		"ip6_nameservers", []any{"2001:db8::53"},
		"sortlist", []any{"130.155.160.0/255.255.240.0", "130.155.0.0/255.255.0.0", "192.168.1.0/255.255.255.0"},
		"domain", "example.com",
		"search", []any{"a.example", "b.example"},
		"options", []any{"ndots:2", "rotate"},
	)
	if d := vectors.Equal(parseResolv(in), want); d != "" {
		t.Fatal(d)
	}
}

func TestKernelParams(t *testing.T) {
	h := fixtureHost(t, map[string]string{"/proc/cmdline": `BOOT_IMAGE=/vmlinuz root=UUID=abc ro quiet "foo=bar baz" a=b=c splash='x y'` + "\n"}, nil)
	want := payload.NewMap("kernelparams", []any{
		[]any{"BOOT_IMAGE", "/vmlinuz"}, []any{"root", nil}, []any{"ro", nil}, []any{"quiet", nil},
		[]any{"foo", "bar baz"}, []any{"a", nil}, []any{"splash", "x y"},
	})
	if d := vectors.Equal(h.kernelParams(), want); d != "" {
		t.Fatal(d)
	}
	bad := fixtureHost(t, map[string]string{"/proc/cmdline": `a="unterminated`}, nil)
	if g := bad.kernelParams(); g != nil {
		t.Fatalf("unterminated quote: %v", g)
	}
}

func TestParseLspci(t *testing.T) {
	out := "Slot:\t00:01.0\nClass:\tVGA compatible controller\nVendor:\tNVIDIA Corporation\nDevice:\tGK104GL [GRID K2]\n\n" +
		"Slot:\t00:02.0\nClass:\tEthernet controller\nVendor:\tIntel Corporation\nDevice:\tI350\n\n" +
		"Slot:\t00:03.0\nClass:\t3D controller\nVendor:\tAdvanced Micro Devices, Inc. [AMD/ATI]\nDevice:\tVega 10"
	want := payload.NewMap("num_gpus", int64(2), "gpus", []any{
		payload.NewMap("vendor", "nvidia", "model", "GK104GL [GRID K2]"),
		payload.NewMap("vendor", "amd", "model", "Vega 10"),
	})
	if d := vectors.Equal(parseLspci(out), want); d != "" {
		t.Fatal(d)
	}
}

func TestDefaultLocale(t *testing.T) {
	tests := []struct {
		env            map[string]string
		lang, enc      string
		ok             bool
		wantUnknownErr bool
	}{
		{map[string]string{"LANG": "C.UTF-8"}, "en_US", "UTF-8", true, false},
		{map[string]string{"LANG": "de_DE.utf8"}, "de_DE", "UTF-8", true, false},
		{map[string]string{"LC_ALL": "fr_FR.ISO-8859-1", "LANG": "de_DE.UTF-8"}, "fr_FR", "ISO8859-1", true, false},
		{map[string]string{"LANG": "en_US"}, "en_US", "ISO8859-1", true, false},
		{map[string]string{}, "", "", true, false},
		{map[string]string{"LANG": "POSIX"}, "", "", true, false},
		{map[string]string{"LANGUAGE": "pt_BR.UTF-8:en"}, "pt_BR", "UTF-8", true, false},
		{map[string]string{"LANG": "garbage"}, "", "", false, true},
	}
	for _, tc := range tests {
		lang, enc, ok := defaultLocale(func(k string) string { return tc.env[k] })
		if lang != tc.lang || enc != tc.enc || ok != tc.ok {
			t.Errorf("%v: got %q %q %v, want %q %q %v", tc.env, lang, enc, ok, tc.lang, tc.enc, tc.ok)
		}
	}
	h := fixtureHost(t, nil, nil)
	h.getenv = func(k string) string { return map[string]string{"LANG": "C"}[k] }
	li := h.localeInfo().Map("locale_info")
	if v, _ := li.Get("defaultlanguage"); v != nil {
		t.Errorf("C locale language %v, want None", v)
	}
	if li.Str("detectedencoding") != "utf-8" {
		t.Errorf("detectedencoding %q", li.Str("detectedencoding"))
	}
}

func TestFnmatchAndExprMatch(t *testing.T) {
	tests := []struct {
		name, pat  string
		glob, expr bool
	}{
		{"ip4_interfaces", "ip*", true, true},
		{"ip4_interfaces", "ip?_interfaces", true, true},
		{"a/b", "a*", true, true},
		{"cpu_flags", "cpu_[fm]*", true, true},
		{"cpu_model", "cpu_[!f]*", true, true},
		{"cpu_flags", "cpu_[!f]*", false, false},
		{"osrelease", "os(release|arch)", false, true},
		{"osrelease", "os", false, false},
		{"x[", "x[", true, true},
	}
	for _, tc := range tests {
		if got := py.Fnmatch(tc.name, tc.pat); got != tc.glob {
			t.Errorf("fnmatch(%q, %q) = %v", tc.name, tc.pat, got)
		}
		if got := stringutils.ExprMatch(tc.name, tc.pat); got != tc.expr {
			t.Errorf("stringutils.ExprMatch(%q, %q) = %v", tc.name, tc.pat, got)
		}
	}
}

func TestVirtual(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string
		cmds        map[string]fakeCmd
		virt, sub   string
		wantSubtype bool
	}{
		{"physical default", nil, nil, "physical", "", false},
		{"systemd-detect-virt kvm", nil, map[string]fakeCmd{"systemd-detect-virt": {"kvm", 0}}, "kvm", "", false},
		{"systemd-detect-virt none", nil, map[string]fakeCmd{"systemd-detect-virt": {"none", 1}}, "physical", "", false},
		{"virt-what wins", nil, map[string]fakeCmd{"virt-what": {"hyperv\n", 0}, "systemd-detect-virt": {"kvm", 0}}, "HyperV", "", false},
		{"dmidecode vmware", nil, map[string]fakeCmd{"dmidecode": {"Product Name: VMware Virtual Platform", 0}}, "VMware", "", false},
		{"docker cgroup", map[string]string{"/proc/1/cgroup": "0::/docker/abc\n12:cpu:/docker/abc\n"}, nil, "container", "Docker", true},
		{"lxc environ", map[string]string{"/proc/1/environ": "PATH=/bin\x00container=lxc\x00"}, nil, "container", "LXC", true},
		{"kubepods only subtype", map[string]string{"/proc/1/cgroup": "1:name=x:/kubepods/pod1\n"}, nil, "virtual", "kubernetes", true},
		{"qemu cpu", map[string]string{"/proc/cpuinfo": "model name : QEMU Virtual CPU version 2.5+\n"}, nil, "kvm", "", false},
		{"gce product", map[string]string{"/sys/devices/virtual/dmi/id/product_name": "Google Compute Engine\n"}, nil, "gce", "", false},
		{"openvz host", map[string]string{"/proc/vz/version": "1\n"}, nil, "openvzhn", "", false},
		{"xen pv domU", map[string]string{"/proc/xen/capabilities": "\n"}, nil, "xen", "Xen PV DomU", true},
		{"amazon nitro", nil, map[string]fakeCmd{
			"systemd-detect-virt": {"kvm", 0},
			"dmidecode":           {"", 1},
			"dmidecode -t system": {"System Information\n\tManufacturer: Amazon EC2\n\tProduct Name: m5.large\n", 0},
		}, "Nitro", "Amazon EC2 (m5.large)", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fixtureHost(t, tc.files, tc.cmds)
			g := h.virtual(context.Background(), &payload.Map{})
			if got := g.Str("virtual"); got != tc.virt {
				t.Errorf("virtual %q, want %q", got, tc.virt)
			}
			sub, has := g.Get("virtual_subtype")
			if has != tc.wantSubtype || (has && sub != tc.sub) {
				t.Errorf("virtual_subtype %v (%v), want %q", sub, has, tc.sub)
			}
		})
	}
}

func TestFixtureHardware(t *testing.T) {
	h := fixtureHost(t, map[string]string{
		"/proc/meminfo":                       "MemTotal:       24684444 kB\nMemFree:  1 kB\nSwapTotal:       2097148 kB\n",
		"/sys/class/dmi/id/bios_version":      "1.2.3\n",
		"/sys/class/dmi/id/product_uuid":      "4C4C4544-0042\n",
		"/sys/class/dmi/id/sys_vendor":        "Dell Inc.\n",
		"/etc/machine-id":                     "abc123\n",
		"/sys/block/sda/queue/rotational":     "1\n",
		"/sys/block/nvme0n1/queue/rotational": "0\n",
		"/proc/mdstat":                        "Personalities : [raid1]\nmd0 : active raid1 sdb1[1] sda1[0]\nunused devices: <none>\n",
		"/run/systemd/system/":                "",
	}, map[string]fakeCmd{"ip": {}})
	h.gateways = func() (any, any, error) { return "10.0.0.1", false, nil }
	checks := []struct {
		m    *payload.Map
		want *payload.Map
	}{
		{h.memData(), payload.NewMap("mem_total", int64(24105), "swap_total", int64(2047))},
		{h.hwData(), payload.NewMap("biosversion", "1.2.3", "manufacturer", "Dell Inc.", "uuid", "4c4c4544-0042")},
		{h.machineID(), payload.NewMap("machine_id", "abc123")},
		{h.disks(), payload.NewMap("disks", []any{"sda"}, "ssds", []any{"nvme0n1"})},
		{h.mdadm(), payload.NewMap("mdadm", []any{"md0"})},
		{h.defaultGateway(), payload.NewMap("ip_gw", true, "ip4_gw", "10.0.0.1", "ip6_gw", false)},
		{payload.NewMap("init", h.initSystem()), payload.NewMap("init", "systemd")},
	}
	for i, c := range checks {
		if d := vectors.Equal(c.m, c.want); d != "" {
			t.Errorf("check %d: %s", i, d)
		}
	}
	noIP := fixtureHost(t, nil, nil)
	if g := noIP.defaultGateway(); g != nil {
		t.Errorf("default_gateway without ip: %v", g)
	}
}

func TestInterfaceGrains(t *testing.T) {
	h := fixtureHost(t, nil, nil)
	h.net = func() ([]iface, error) {
		return []iface{
			{name: "lo", hwaddr: "00:00:00:00:00:00", hasHW: true, inet: []string{"127.0.0.1"}, inet6: []string{"::1"}},
			{name: "eth0", hwaddr: "52:54:00:12:34:56", hasHW: true, inet: []string{"10.0.0.5"},
				inet6: []string{"fe80::1", "2001:db8::5"}, second: []string{"10.0.0.6"}},
			{name: "tun0", inet: []string{"10.8.0.2"}},
		}, nil
	}
	g := h.ipInterfaces(context.Background())
	want := map[string]any{
		"ip_interfaces": payload.NewMap("lo", []any{"127.0.0.1", "::1"},
			"eth0", []any{"10.0.0.5", "fe80::1", "2001:db8::5", "10.0.0.6"}, "tun0", []any{"10.8.0.2"}),
		"ip4_interfaces": payload.NewMap("lo", []any{"127.0.0.1"}, "eth0", []any{"10.0.0.5", "10.0.0.6"}, "tun0", []any{"10.8.0.2"}),
		"ip6_interfaces": payload.NewMap("lo", []any{"::1"}, "eth0", []any{"fe80::1", "2001:db8::5"}, "tun0", []any{}),
		"ipv4":           []any{"10.0.0.5", "10.0.0.6", "10.8.0.2", "127.0.0.1"},
		"ipv6":           []any{"::1", "2001:db8::5", "fe80::1"},
	}
	for k, w := range want {
		v, _ := g.Get(k)
		if d := vectors.Equal(v, w); d != "" {
			t.Errorf("%s: %s", k, d)
		}
	}
	hw := h.hwaddrInterfaces()
	if d := vectors.Equal(hw, payload.NewMap("hwaddr_interfaces",
		payload.NewMap("lo", "00:00:00:00:00:00", "eth0", "52:54:00:12:34:56"))); d != "" {
		t.Error(d)
	}
	if got := netinfo.LinkAddrString([]byte{10, 0, 0, 1}, netinfo.ArphrdIPGRE); got != "10.0.0.1" {
		t.Errorf("gre address %q", got)
	}
	if got := netinfo.LinkAddrString([]byte{0xde, 0xad, 0xbe, 0xef, 0, 1}, 1); got != "de:ad:be:ef:00:01" {
		t.Errorf("ether address %q", got)
	}
}

func TestYAMLFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grains")
	src := "roles:\n  - web\n  - db\nport: 0755\nneg: -010\nhex: 0x1F\non: yes\nratio: 1.5\nname: 'yes'\nempty:\nnested:\n  a: {b: 1}\nbase: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := payload.NewMap(
		"roles", []any{"web", "db"}, "port", int64(755), "neg", int64(-8), "hex", int64(31), true, true,
		"ratio", 1.5, "name", "yes", "empty", nil, "nested", payload.NewMap("a", payload.NewMap("b", int64(1))),
		"base", payload.NewMap("x", int64(1), "y", int64(2)), "derived", payload.NewMap("x", int64(1), "y", int64(3)),
	)
	if d := vectors.Equal(got, want); d != "" {
		t.Fatal(d)
	}
	if err := WriteFile(p, payload.NewMap("z", "yes", "a", []any{int64(1), "on"}, "m", payload.NewMap("k", nil))); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := vectors.Equal(back, payload.NewMap("a", []any{int64(1), "on"}, "m", payload.NewMap("k", nil), "z", "yes")); d != "" {
		t.Fatalf("round trip: %s", d)
	}
	raw, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(raw), "a:\n") {
		t.Errorf("keys not sorted / not block style:\n%s", raw)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(p, []byte("a: [1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); !errors.Is(err, ErrGrainsFile) {
		t.Errorf("bad YAML: %v", err)
	}
	if err := os.WriteFile(p, []byte("a: 1\na: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); !errors.Is(err, ErrGrainsFile) {
		t.Errorf("duplicate key: %v", err)
	}
}

// TestLoadPrecedence: static grains from the configuration beat the grains
// file, which beats the computed grains; grains_deep_merge merges maps and
// grains_blacklist drops computed and file grains.
func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := "os: FromFile\nroles: [file]\ndns:\n  extra: 1\nsecret: x\n"
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	static := payload.NewMap("roles", []any{"config"}, "custom", "c")
	opts := Options{ID: "m1", Master: []any{"a", "b"}, ConfDir: dir, Grains: static,
		Opts: mapGetter{"enable_fqdns_grains": false, "grains_blacklist": []any{"secret", "kernel.*"}}}
	g, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]any{
		"os": "FromFile", "roles": []any{"config"}, "custom": "c", "id": "m1",
		"master": []any{"a", "b"}, "dns": payload.NewMap("extra", int64(1)),
		"saltversion": version.Salt, "saltversioninfo": []any{int64(3006), int64(0)}, "fqdns": []any{},
	}
	for k, want := range checks {
		v, _ := g.Get(k)
		if d := vectors.Equal(v, want); d != "" {
			t.Errorf("%s: %s", k, d)
		}
	}
	for _, k := range []string{"secret", "kernel", "kernelrelease"} {
		if g.Has(k) {
			t.Errorf("%s not blacklisted", k)
		}
	}
	if !sort.StringsAreSorted(g.Keys()) {
		t.Error("keys not sorted")
	}
	opts.Opts = mapGetter{"enable_fqdns_grains": false, "grains_deep_merge": true}
	g, err = Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	dns := g.Map("dns")
	if dns == nil || !dns.Has("nameservers") || !dns.Has("extra") {
		t.Errorf("deep merge: dns %v", dns)
	}
	if !g.Has("kernel") {
		t.Error("kernel missing without blacklist")
	}
	// A bad grains file is skipped.
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("os: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err = Load(context.Background(), opts)
	if err != nil || g.Str("os") == "FromFile" || g.Str("custom") != "c" {
		t.Fatalf("bad file: %v %v", err, g.Str("os"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Core(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Core: %v", err)
	}
}
