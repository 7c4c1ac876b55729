package grains

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gsalt/gsalt/wire/payload"
)

// osNameMap maps the first ten characters (no spaces, lowercased) of the
// distribution name to Salt's os grain.
var osNameMap = map[string]string{
	"redhatente": "RedHat", "gentoobase": "Gentoo", "archarm": "Arch ARM",
	"arch": "Arch", "debian": "Debian", "Junos": "Junos", "raspbian": "Raspbian",
	"fedoraremi": "Fedora", "chapeau": "Chapeau", "korora": "Korora",
	"amazonami": "Amazon", "alt": "ALT", "enterprise": "OEL", "oracleserv": "OEL",
	"cloudserve": "CloudLinux", "cloudlinux": "CloudLinux", "almalinux": "AlmaLinux",
	"pidora": "Fedora", "scientific": "ScientificLinux", "synology": "Synology",
	"nilrt": "NILinuxRT", "poky": "Poky", "manjaro": "Manjaro", "manjarolin": "Manjaro",
	"univention": "Univention", "antergos": "Antergos", "sles": "SUSE", "void": "Void",
	"slesexpand": "RES", "linuxmint": "Mint", "neon": "KDE neon", "pop": "Pop",
	"rocky": "Rocky", "alibabaclo": "Alinux", "mendel": "Mendel",
}

// idAndNameToOS maps an os-release (ID, NAME) pair to Salt's os grain.
var idAndNameToOS = map[[2]string]string{
	{"astra", "Astra Linux (Orel)"}:     "AstraLinuxCE",
	{"astra", "Astra Linux (Smolensk)"}: "AstraLinuxSE",
	{"pop", "Pop!_OS"}:                  "Pop",
}

// osFamilyMap maps the os grain to os_family.
var osFamilyMap = map[string]string{
	"Ubuntu": "Debian", "Fedora": "RedHat", "Chapeau": "RedHat", "Korora": "RedHat",
	"FedBerry": "RedHat", "CentOS": "RedHat", "CentOS Stream": "RedHat", "GoOSe": "RedHat",
	"Scientific": "RedHat", "Amazon": "RedHat", "CloudLinux": "RedHat", "AlmaLinux": "RedHat",
	"OVS": "RedHat", "OEL": "RedHat", "XCP": "RedHat", "XCP-ng": "RedHat",
	"XenServer": "RedHat", "RES": "RedHat", "Sangoma": "RedHat", "VMware Photon OS": "RedHat",
	"Mandrake": "Mandriva", "Mint": "Debian", "VMwareESX": "VMware", "Bluewhite64": "Bluewhite",
	"Slamd64": "Slackware", "SLES": "Suse", "SUSE Enterprise Server": "Suse",
	"SUSE  Enterprise Server": "Suse", "SLED": "Suse", "openSUSE": "Suse", "SUSE": "Suse",
	"openSUSE Leap": "Suse", "openSUSE Tumbleweed": "Suse", "SLES_SAP": "Suse",
	"Arch ARM": "Arch", "Manjaro": "Arch", "Antergos": "Arch", "EndeavourOS": "Arch",
	"ALT": "RedHat", "Trisquel": "Debian", "GCEL": "Debian", "Linaro": "Debian",
	"elementary OS": "Debian", "elementary": "Debian", "Univention": "Debian",
	"ScientificLinux": "RedHat", "Raspbian": "Debian", "Devuan": "Debian", "antiX": "Debian",
	"Kali": "Debian", "Parrot OS": "Debian", "neon": "Debian", "Cumulus": "Debian",
	"Deepin": "Debian", "NILinuxRT": "NILinuxRT", "KDE neon": "Debian", "Void": "Void",
	"IDMS": "Debian", "Funtoo": "Gentoo", "TurnKey": "Debian", "Pop": "Debian",
	"Rocky": "RedHat", "AstraLinuxCE": "Debian", "AstraLinuxSE": "Debian",
	"Alinux": "RedHat", "Mendel": "Debian", "OSMC": "Debian",
}

// osReleaseOnly are the os-release IDs Salt derives its grains from
// os-release alone.
var osReleaseOnly = map[string]bool{
	"almalinux": true, "astra": true, "debian": true, "linuxmint": true,
	"mendel": true, "pop": true, "rocky": true, "ubuntu": true,
}

var (
	reReplaceLinux = regexp.MustCompile(`(?i)\W(?:gnu/)?linux`)
	rePrettyName   = regexp.MustCompile(`^[^\d]+ (?P<version>\d[\d.+\-a-z]*) \((?P<codename>.+)\)`)
	reVersion      = regexp.MustCompile(`^\d[\d.+\-a-z]* \((?P<codename>.+)\)`)
	reLSB          = regexp.MustCompile(`^(DISTRIB_(?:ID|RELEASE|CODENAME|DESCRIPTION))=(?:'|")?([\w\s\.\-_]+)(?:'|")?`)
	reOSRelLine    = regexp.MustCompile(`^([a-zA-Z0-9_]+)=(.*)$`)
	reOSRelEscape  = regexp.MustCompile(`\\([\\$"'` + "`" + `])`)
)

// parseOSRelease is Python's platform.freedesktop_os_release parser.
func parseOSRelease(data string) map[string]string {
	info := map[string]string{"NAME": "Linux", "ID": "linux", "PRETTY_NAME": "Linux"}
	for _, line := range strings.Split(data, "\n") {
		m := reOSRelLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := m[2]
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		info[m[1]] = reOSRelEscape.ReplaceAllString(v, "$1")
	}
	return info
}

// deriveOS is core._derive_os_grain.
func deriveOS(fullname, id string) string {
	if v, ok := idAndNameToOS[[2]string{id, fullname}]; ok {
		return v
	}
	distro := strings.TrimSpace(reReplaceLinux.ReplaceAllString(fullname, ""))
	short := []rune(strings.ToLower(strings.ReplaceAll(distro, " ", "")))
	if len(short) > 10 {
		short = short[:10]
	}
	if v, ok := osNameMap[string(short)]; ok {
		return v
	}
	return distro
}

// familyID is core._family_id.
func familyID(id, idLike string) string {
	if idLike == "" {
		return id
	}
	ids := append([]string{id}, strings.Fields(idLike)...)
	for _, x := range ids {
		if x == "debian" || x == "ubuntu" {
			return "debian"
		}
	}
	return ids[len(ids)-1]
}

// pyCapitalize is Python's str.capitalize.
func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}

func prettifyFamily(id string) string {
	if id == "fedora" {
		return "RedHat"
	}
	return pyCapitalize(id)
}

// osReleaseGrains is core._os_release_to_grains. A missing codename or
// release is kept as None, as Salt does.
func osReleaseGrains(rel map[string]string) *payload.Map {
	g := &payload.Map{}
	g.Set("os", deriveOS(rel["NAME"], rel["ID"]))
	g.Set("os_family", prettifyFamily(familyID(rel["ID"], rel["ID_LIKE"])))
	var codename any
	if c := rel["VERSION_CODENAME"]; c != "" {
		codename = c
	} else {
		switch rel["ID"] {
		case "astra":
			if v, ok := rel["VARIANT_ID"]; ok {
				codename = v
			}
		case "almalinux", "rocky":
			if m := reVersion.FindStringSubmatch(rel["VERSION"]); m != nil {
				codename = m[1]
			}
		}
	}
	g.Set("oscodename", codename)
	g.Set("osfullname", strings.TrimSpace(rel["NAME"]))
	var release any
	if r := rel["VERSION_ID"]; r != "" {
		release = r
	} else if rel["ID"] == "mendel" {
		if m := rePrettyName.FindStringSubmatch(rel["PRETTY_NAME"]); m != nil {
			release = m[1]
		}
	}
	g.Set("osrelease", release)
	return g
}

// parseLSBRelease is core._parse_lsb_release.
func parseLSBRelease(data string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(data, "\n") {
		m := reLSB.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		out["lsb_"+strings.ToLower(m[1])] = strings.TrimRightFunc(m[2], unicode.IsSpace)
	}
	return out
}

// distribution is core._linux_distribution_data, with the lsb_release
// Python module unavailable (as in Salt's onedir packages).
func (h *host) distribution() *payload.Map {
	g := &payload.Map{}
	lsb := map[string]string{}
	if data, err := h.readFile("/etc/lsb-release"); err == nil {
		lsb = parseLSBRelease(data)
	}
	keys := make([]string, 0, len(lsb))
	for k := range lsb {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g.Set(k, lsb[k])
	}
	var rel map[string]string
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if data, err := h.readFile(p); err == nil {
			rel = parseOSRelease(data)
			break
		}
	}
	if rel != nil {
		h.mergeInto(g, osReleaseGrains(rel))
		if osReleaseOnly[rel["ID"]] {
			return g
		}
	}
	g.Delete("osrelease")
	return h.legacyDistribution(g, rel, lsb)
}

// legacyDistribution is core._legacy_linux_distribution_data for systems
// with an os-release file (the ancient release-file-only branches for
// SuSE, ALT, CentOS and Synology without os-release are not reproduced).
func (h *host) legacyDistribution(g *payload.Map, rel, lsb map[string]string) *payload.Map {
	if strings.HasPrefix(strings.ToLower(g.Str("lsb_distrib_description")), "antergos") {
		g.Set("osfullname", "Antergos Linux")
	} else if !g.Has("lsb_distrib_id") && rel != nil {
		g.Set("lsb_distrib_id", strings.TrimSpace(rel["NAME"]))
		if v, ok := rel["VERSION_ID"]; ok {
			g.Set("lsb_distrib_release", v)
		}
		if v, ok := rel["VERSION_CODENAME"]; ok {
			g.Set("lsb_distrib_codename", v)
		} else if v, ok := rel["PRETTY_NAME"]; ok {
			g.Set("lsb_distrib_codename", v)
		}
		if cpe, ok := rel["CPE_NAME"]; ok {
			vendor, version, valid := parseCPE(cpe)
			if valid && (strings.ToLower(vendor) == "suse" || strings.ToLower(vendor) == "opensuse") {
				g.Set("os", "SUSE")
				if rel["NAME"] == "openSUSE Leap" {
					g.Set("osfullname", "Leap")
				} else if rel["VERSION"] == "Tumbleweed" {
					g.Set("osfullname", rel["VERSION"])
				}
				if version != "" && vendor == "opensuse" {
					g.Set("lsb_distrib_release", version)
				}
			}
		}
	}
	d := h.distroInfo(rel, lsb)
	if !g.Has("osfullname") {
		if strings.HasPrefix(strings.ToLower(g.Str("lsb_distrib_id")), "nilrt") {
			g.Set("osfullname", "nilrt")
		} else if v, ok := g.Get("lsb_distrib_id"); ok {
			g.Set("osfullname", strings.TrimSpace(payload.Text(v)))
		} else {
			g.Set("osfullname", strings.TrimSpace(d.id))
		}
	}
	if !g.Has("osrelease") {
		codename := g.Str("lsb_distrib_codename")
		if strings.Contains(codename, "CentOS Linux 7") || strings.Contains(codename, "CentOS Linux 8") {
			g.Delete("lsb_distrib_release")
		}
		if v, ok := g.Get("lsb_distrib_release"); ok {
			g.Set("osrelease", strings.TrimSpace(payload.Text(v)))
		} else {
			g.Set("osrelease", strings.TrimSpace(d.version))
		}
	}
	codename := strings.TrimSpace(g.Str("lsb_distrib_codename"))
	if codename == "" {
		codename = d.codename
	}
	if strings.Contains(codename, "Red Hat") {
		codename = d.codename
	}
	g.Set("oscodename", codename)
	if !g.Has("os") {
		g.Set("os", deriveOS(g.Str("osfullname"), ""))
	}
	osName := g.Str("os")
	if fam, ok := osFamilyMap[osName]; ok {
		g.Set("os_family", fam)
	} else {
		g.Set("os_family", osName)
	}
	return g
}

// parseCPE is core._parse_cpe_name, returning the vendor and version and
// whether the name could be parsed.
func parseCPE(cpe string) (vendor, version string, ok bool) {
	p := strings.Split(cpe, ":")
	if len(p) <= 4 || p[0] != "cpe" {
		return "", "", false
	}
	star := func(s string) string {
		if s == "*" {
			return ""
		}
		return s
	}
	switch {
	case strings.HasPrefix(p[1], "/"):
		return p[2], p[4], true
	case len(p) == 6 && p[1] == "2.3":
		return star(p[3]), star(p[5]), true
	case len(p) > 7 && len(p) <= 13 && p[1] == "2.3":
		return star(p[3]), star(p[5]), true
	}
	return "", "", false
}

// distroData is what the distro package reports (id, version with
// best=True, codename), which Salt's legacy code falls back to.
type distroData struct {
	id, version, codename string
}

var (
	reDistroRelease  = regexp.MustCompile(`^(?:[^)]*\)(.*)\()? *(?:STL )?([\d.+\-a-z]*\d) *(?:esaeler *)?(.+)`)
	reDistroBasename = regexp.MustCompile(`^(\w+)[-_](release|version)$`)
	reDistroCodename = regexp.MustCompile(`\((\D+)\)|,\s*(\D+)`)
)

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// parseDistroReleaseLine is distro's _parse_distro_release_content.
func parseDistroReleaseLine(line string) (name, version, codename string) {
	line = strings.TrimSpace(line)
	m := reDistroRelease.FindStringSubmatch(reverse(line))
	if m == nil {
		return line, "", ""
	}
	return reverse(m[3]), reverse(m[2]), reverse(m[1])
}

// distroInfo emulates distro.id(), distro.version(best=True) and
// distro.codename() from os-release, /etc/lsb-release, the distro release
// file and /etc/debian_version (without running lsb_release).
func (h *host) distroInfo(rel, lsb map[string]string) distroData {
	var d distroData
	relName, relVersion, relCodename, relID := "", "", "", ""
	if entries, err := os.ReadDir(h.path("/etc")); err == nil {
		ignore := map[string]bool{"debian_version": true, "lsb-release": true, "oem-release": true,
			"os-release": true, "system-release": true, "plesk-release": true, "iredmail-release": true}
		for _, e := range entries {
			m := reDistroBasename.FindStringSubmatch(e.Name())
			if m == nil || ignore[e.Name()] || !h.isFile("/etc/"+e.Name()) {
				continue
			}
			data, err := h.readFile("/etc/" + e.Name())
			if err != nil {
				continue
			}
			first, _, _ := strings.Cut(data, "\n")
			relName, relVersion, relCodename = parseDistroReleaseLine(first)
			relID = m[1]
			if strings.Contains(strings.ToLower(relName), "cloudlinux") {
				relID = "cloudlinux"
			}
			break
		}
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "_") }
	switch {
	case rel != nil && rel["ID"] != "":
		d.id = norm(rel["ID"])
		if d.id == "ol" {
			d.id = "oracle"
		} else if d.id == "opensuse-leap" {
			d.id = "opensuse"
		}
	case lsb["lsb_distrib_id"] != "":
		d.id = norm(lsb["lsb_distrib_id"])
	case relID != "":
		d.id = norm(relID)
	}
	_, prettyVersion, _ := parseDistroReleaseLine(rel["PRETTY_NAME"])
	if rel == nil || rel["PRETTY_NAME"] == "" {
		prettyVersion = ""
	}
	_, lsbDescVersion, _ := parseDistroReleaseLine(lsb["lsb_distrib_description"])
	if lsb["lsb_distrib_description"] == "" {
		lsbDescVersion = ""
	}
	versions := []string{rel["VERSION_ID"], lsb["lsb_distrib_release"], relVersion, prettyVersion, lsbDescVersion}
	if d.id == "debian" || strings.Contains(" "+rel["ID_LIKE"]+" ", " debian ") {
		if dv, err := h.readFile("/etc/debian_version"); err == nil {
			versions = append(versions, strings.TrimSpace(dv))
		}
	}
	for _, v := range versions {
		if strings.Count(v, ".") > strings.Count(d.version, ".") || d.version == "" {
			d.version = v
		}
	}
	// codename: os-release (VERSION_CODENAME, UBUNTU_CODENAME, or parsed from
	// VERSION), then lsb, then the release file.
	osCodename, has := "", false
	if rel != nil {
		if v, ok := rel["VERSION"]; ok {
			if m := reDistroCodename.FindStringSubmatch(v); m != nil {
				osCodename, has = m[1]+m[2], true
			}
		}
		if v, ok := rel["VERSION_CODENAME"]; ok {
			osCodename, has = v, true
		} else if v, ok := rel["UBUNTU_CODENAME"]; ok {
			osCodename, has = v, true
		}
	}
	switch {
	case has:
		d.codename = osCodename
	case lsb["lsb_distrib_codename"] != "":
		d.codename = lsb["lsb_distrib_codename"]
	default:
		d.codename = relCodename
	}
	return d
}
