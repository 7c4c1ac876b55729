package grains

import (
	"context"
	"hash/adler32"
	"hash/crc32"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/version"
	"github.com/gsalt/gsalt/wire/payload"
)

func versionSalt() string { return version.Salt }

func versionSaltInfo() []any {
	out := make([]any, len(version.SaltInfo))
	for i, v := range version.SaltInfo {
		out[i] = v
	}
	return out
}

// appendDomain is core.append_domain.
func (h *host) appendDomain() *payload.Map {
	if v, ok := h.opt("append_domain"); ok {
		return payload.NewMap("append_domain", v)
	}
	return nil
}

func (h *host) cwdGrain() *payload.Map {
	wd, _ := os.Getwd()
	return payload.NewMap("cwd", wd)
}

// machineID is core.get_machine_id.
func (h *host) machineID() *payload.Map {
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if !h.exists(p) {
			continue
		}
		s, err := h.readFile(p)
		if err != nil {
			return nil
		}
		return payload.NewMap("machine_id", strings.TrimSpace(s))
	}
	return nil
}

// serverID is core.get_server_id.
func (h *host) serverID() *payload.Map {
	id := h.opts.ID
	if v, ok := h.opt("server_id_use_crc"); ok && payload.Truthy(v) {
		var sum uint32
		if payload.Text(v) == "crc32" {
			sum = crc32.ChecksumIEEE([]byte(id))
		} else {
			sum = adler32.Checksum([]byte(id))
		}
		return payload.NewMap("server_id", int64(sum))
	}
	return payload.NewMap("server_id", serverIDHash(id, 2))
}

// serverIDHash is abs(hash(id) % 2**31) with Python's string hash with
// PYTHONHASHSEED=0: SipHash with a zero key over the string's internal
// representation, with cRounds compression rounds (2 for Python <= 3.10,
// 1 for Python >= 3.11).
func serverIDHash(id string, cRounds int) int64 {
	h := py.HashStr(id, cRounds)
	// Python's % with a positive modulus is never negative.
	m := h % (1 << 31)
	if m < 0 {
		m += 1 << 31
	}
	return m
}

// kernelParams is core.kernelparams.
func (h *host) kernelParams() *payload.Map {
	data, err := h.readFile("/proc/cmdline")
	if err != nil {
		return nil
	}
	words, err := py.ShlexSplit(data)
	if err != nil {
		return nil
	}
	params := []any{}
	for _, w := range words {
		parts := strings.Split(w, "=")
		var val any
		if len(parts) == 2 {
			val = strings.Trim(parts[1], `"`)
		}
		params = append(params, []any{parts[0], val})
	}
	return payload.NewMap("kernelparams", params)
}

// localeInfo is core.locale_info.
func (h *host) localeInfo() *payload.Map {
	lang, enc, ok := defaultLocale(h.getenv)
	var l, e any = "unknown", "unknown"
	if ok {
		l, e = lang, enc
		if lang == "" {
			l = nil
		}
		if enc == "" {
			e = nil
		}
	}
	detected := "utf-8"
	if ok && enc != "" && !strings.EqualFold(strings.ReplaceAll(enc, "-", ""), "utf8") {
		detected = strings.ToLower(enc)
	}
	tz, _ := time.Now().Zone()
	if tz == "" {
		tz = "unknown"
	}
	return payload.NewMap("locale_info", payload.NewMap(
		"defaultlanguage", l,
		"defaultencoding", e,
		"detectedencoding", detected,
		"timezone", tz,
	))
}

// localeEncodings normalizes the common encoding spellings the way
// Python's locale.normalize does.
var localeEncodings = map[string]string{
	"utf8": "UTF-8", "iso88591": "ISO8859-1", "88591": "ISO8859-1", "latin1": "ISO8859-1",
	"iso885915": "ISO8859-15", "885915": "ISO8859-15", "iso88595": "ISO8859-5", "eucjp": "eucJP",
	"euckr": "eucKR", "gb2312": "gb2312", "gbk": "GBK", "big5": "big5", "koi8r": "KOI8-R",
	"cp1251": "CP1251", "ascii": "ISO8859-1",
}

// defaultLocale is Python's locale.getdefaultlocale on POSIX (what
// salt.utils.locales.getdefaultlocale falls back to): the first of LC_ALL,
// LC_CTYPE, LANG and LANGUAGE, normalized. ok is false where Python raises
// "unknown locale". Only the common forms of Python's alias table are
// known: "lang_TERRITORY.encoding", C, POSIX, C.UTF-8 (en_US.UTF-8 in
// Python <= 3.11) and bare "lang_TERRITORY" (ISO8859-1).
func defaultLocale(getenv func(string) string) (lang, enc string, ok bool) {
	name := "C"
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG", "LANGUAGE"} {
		if s := getenv(v); s != "" {
			if v == "LANGUAGE" {
				s, _, _ = strings.Cut(s, ":")
			}
			name = s
			break
		}
	}
	code, modifier, _ := strings.Cut(name, "@")
	code, encoding, hasEnc := strings.Cut(code, ".")
	if hasEnc {
		key := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(encoding))
		if e, ok := localeEncodings[key]; ok {
			encoding = e
		}
	}
	switch strings.ToLower(code) {
	case "c", "posix":
		if !hasEnc {
			return "", "", true
		}
		if encoding == "UTF-8" {
			return "en_US", "UTF-8", true
		}
		return "", "", false
	case "":
		if hasEnc {
			return "", "", false
		}
		if strings.EqualFold(modifier, "") {
			return "", "", false
		}
	}
	if strings.EqualFold(code, "UTF-8") && !hasEnc {
		return "", "UTF-8", true
	}
	if !strings.Contains(code, "_") {
		return "", "", false
	}
	if !hasEnc {
		if modifier == "euro" {
			return code, "ISO8859-15", true
		}
		return code, "ISO8859-1", true
	}
	return code, encoding, true
}

// pathGrains is core.path.
func (h *host) pathGrains() *payload.Map {
	p := strings.TrimSpace(h.getenv("PATH"))
	return payload.NewMap("path", p, "systempath", strList(strings.Split(p, string(os.PathListSeparator))))
}

// shell is extra.shell.
func (h *host) shell() string {
	if s, ok := os.LookupEnv("SHELL"); ok && h.root == "" {
		return s
	}
	if s := h.getenv("SHELL"); s != "" {
		return s
	}
	return "/bin/sh"
}

// disks is disks._linux_disks.
func (h *host) disks() *payload.Map {
	disks, ssds := []string{}, []string{}
	entries, err := os.ReadDir(h.path("/sys/block"))
	if err == nil {
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, name := range names {
			link, err := os.Readlink(h.path("/sys/block/" + name))
			if err == nil && strings.HasPrefix(link, "../devices/virtual/") {
				continue
			}
			flag, err := h.readFile("/sys/block/" + name + "/queue/rotational")
			if err != nil || flag == "" {
				continue
			}
			switch flag[0] {
			case '0':
				ssds = append(ssds, name)
			case '1':
				disks = append(disks, name)
			}
		}
	}
	return payload.NewMap("disks", strList(disks), "ssds", strList(ssds))
}

// lvm is lvm._linux_lvm.
func (h *host) lvm(ctx context.Context) *payload.Map {
	if v, ok := h.opt("enable_lvm_grains"); ok && !payload.Truthy(v) {
		return nil
	}
	if h.which("lvm") == "" {
		return nil
	}
	vgs := &payload.Map{}
	for _, vg := range py.SplitLines(h.output(ctx, "lvm", "vgs", "-o", "vg_name", "--noheadings"), false) {
		vg = strings.TrimSpace(vg)
		lvs := []any{}
		for _, lv := range py.SplitLines(h.output(ctx, "lvm", "lvs", "-o", "lv_name", "--noheadings", vg), false) {
			lvs = append(lvs, strings.TrimSpace(lv))
		}
		vgs.Set(vg, lvs)
	}
	return payload.NewMap("lvm", vgs)
}

// mdadm is mdadm.mdadm.
func (h *host) mdadm() *payload.Map {
	data, err := h.readFile("/proc/mdstat")
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	for _, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(line, "Personalities : ") || strings.HasPrefix(line, "unused devices:") {
			continue
		}
		if dev, _, ok := strings.Cut(line, " : "); ok {
			set[dev] = true
		}
	}
	devs := make([]string, 0, len(set))
	for d := range set {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	return payload.NewMap("mdadm", strList(devs))
}

// uefi is extra.uefi.
func (h *host) uefi() *payload.Map {
	dir := ""
	for _, d := range []string{"/sys/firmware/efi/efivars", "/sys/firmware/efi/vars"} {
		if h.exists(d) {
			dir = d
			break
		}
	}
	secure := false
	if dir != "" {
		matches, _ := filepath.Glob(filepath.Join(h.path(dir), "SecureBoot-*", "data"))
		if len(matches) == 1 {
			if b, err := os.ReadFile(matches[0]); err == nil && len(b) > 0 && b[len(b)-1] == 1 {
				secure = true
			}
		}
	}
	return payload.NewMap("efi", dir != "", "efi-secure-boot", secure)
}

// processGrains is minion_process.grains. Like Salt, it gives nothing
// when the effective user has no passwd entry.
func (h *host) processGrains() *payload.Map {
	uid, gid := os.Geteuid(), os.Getegid()
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return nil
	}
	groupname := ""
	if g, err := user.LookupGroupId(u.Gid); err == nil {
		groupname = g.Name
	}
	return payload.NewMap(
		"username", u.Username,
		"groupname", groupname,
		"pid", int64(os.Getpid()),
		"gid", int64(gid),
		"uid", int64(uid),
	)
}

// zfs is zfs.zfs (without the zpool sizes).
func (h *host) zfs(ctx context.Context) *payload.Map {
	supported := h.which("zpool") != "" && (h.exists("/sys/module/zfs") || h.which("zfs-fuse") != "")
	flags := false
	if h.which("man") != "" {
		_, code, err := h.exec(ctx, "man", "zpool-features")
		flags = err == nil && code == 0
	}
	return payload.NewMap("zfs_support", supported, "zfs_feature_flags", flags)
}
