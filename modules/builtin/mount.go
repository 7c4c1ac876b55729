package builtin

import (
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// mountFunctions is the fstab part of Salt's mount module
// (salt/modules/mount.py) on Linux.
func mountFunctions() []modules.Function {
	return []modules.Function{
		{Name: "mount.fstab", Spec: modules.Spec{Params: []modules.Param{opt("config", "/etc/fstab")}},
			Doc: "List the contents of the fstab\n\nCLI Example:\n\n    salt '*' mount.fstab",
			Fn:  mountFstab},
		{Name: "mount.rm_fstab", Spec: modules.Spec{Params: []modules.Param{req("name"), req("device"), opt("config", "/etc/fstab")}},
			Doc: "Remove the mount point from the fstab\n\nCLI Example:\n\n    salt '*' mount.rm_fstab /mnt/foo /dev/sdg",
			Fn:  mountRmFstab},
		{Name: "mount.set_fstab", Spec: modules.Spec{Params: []modules.Param{req("name"), req("device"), req("fstype"), opt("opts", "defaults"),
			opt("dump", int64(0)), opt("pass_num", int64(0)), opt("config", "/etc/fstab"), opt("test", false), opt("match_on", "auto"), opt("not_change", false)}, Kwargs: true},
			Doc: "Verify that this mount is represented in the fstab, change the mount\nto match the data passed, or add the mount if it is not present.\n\nIf the entry is found via `match_on` and `not_change` is True, the\ncurrent line will be preserved.\n\nCLI Example:\n\n    salt '*' mount.set_fstab /mnt/foo /dev/sdz1 ext4",
			Fn:  mountSetFstab},
	}
}

var (
	mountFstabKeys  = []string{"device", "name", "fstype", "opts", "dump", "pass_num"}
	mountCompatKeys = []string{"device", "name", "fstype", "opts", "dump", "pass"}
	errFstabParse   = errors.New("fstab parse error")
)

// fstabDict is _fstab_entry.dict_from_line.
func fstabDict(line string, keys []string) (map[string]string, error) {
	if strings.HasPrefix(line, "#") {
		return nil, errFstabParse
	}
	comps := strings.Fields(line)
	if len(comps) < 4 || len(comps) > 6 {
		return nil, errFstabParse
	}
	for len(comps) < 6 {
		comps = append(comps, "0")
	}
	out := map[string]string{}
	for i, k := range keys {
		out[k] = comps[i]
	}
	return out, nil
}

// fstabEntry is _fstab_entry: criteria with str() values (None dropped).
type fstabEntry map[string]string

func newFstabEntry(kv map[string]any) fstabEntry {
	e := fstabEntry{}
	for k, v := range kv {
		if v != nil {
			e[k] = pyfmt.Str(v)
		}
	}
	return e
}

func (e fstabEntry) match(line string) (bool, error) {
	entry, err := fstabDict(line, mountFstabKeys)
	if err != nil {
		return false, err
	}
	for k, v := range e {
		if k == "opts" {
			a, b := strings.Split(entry[k], ","), strings.Split(v, ",")
			sort.Strings(a)
			sort.Strings(b)
			if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
				return false, nil
			}
			continue
		}
		if entry[k] != v {
			return false, nil
		}
	}
	return true, nil
}

func (e fstabEntry) String() string {
	return fmt.Sprintf("%s\t\t%s\t%s\t%s\t%s %s\n", e["device"], e["name"], e["fstype"], e["opts"], e["dump"], e["pass_num"])
}

func mountFstab(_ context.Context, c *modules.Call) (any, error) {
	ret := &payload.Map{}
	config := c.Args.Str("config")
	if st, err := os.Stat(config); err != nil || !st.Mode().IsRegular() {
		return ret, nil
	}
	b, err := readBounded(config, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	for _, line := range py.FileLines(string(b)) {
		e, err := fstabDict(line, mountCompatKeys)
		if err != nil {
			continue
		}
		name := e["name"]
		for ret.Has(name) {
			name += "_"
		}
		ret.Set(name, payload.NewMap("device", e["device"], "fstype", e["fstype"], "opts", grainsStrList(strings.Split(e["opts"], ",")),
			"dump", e["dump"], "pass", e["pass"]))
	}
	return ret, nil
}

func mountRmFstab(_ context.Context, c *modules.Call) (any, error) {
	config := c.Args.Str("config")
	crit := newFstabEntry(map[string]any{"name": c.Args.Get("name"), "device": c.Args.Get("device")})
	b, err := readBounded(config, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: Couldn't read from %s: %s", modules.ErrExecution, config, pyOSErrorText(err))
	}
	var lines []string
	modified := false
	for _, line := range py.FileLines(string(b)) {
		ok, err := crit.match(line)
		if err == nil && ok {
			modified = true
			continue
		}
		lines = append(lines, line)
	}
	if modified {
		if err := os.WriteFile(config, []byte(strings.Join(lines, "")), 0o644); err != nil {
			return nil, fmt.Errorf("%w: Couldn't write to %s: %s", modules.ErrExecution, config, pyOSErrorText(err))
		}
	}
	return true, nil
}

// pyOSErrorText is str(OSError): "[Errno N] strerror: 'path'".
func pyOSErrorText(err error) string { return cmdPyOSError(err) }

var mountSpecialFS = map[string]bool{"none": true, "tmpfs": true, "sysfs": true, "proc": true, "fusectl": true, "debugfs": true, "securityfs": true,
	"devtmpfs": true, "cgroup": true, "nfs": true, "nfs4": true, "glusterfs": true, "btrfs": true}

func mountSetFstab(_ context.Context, c *modules.Call) (any, error) {
	a := c.Args
	opts := a.Get("opts")
	if l, ok := opts.([]any); ok {
		var parts []string
		for _, x := range l {
			parts = append(parts, pyfmt.Str(x))
		}
		opts = strings.Join(parts, ",")
	}
	entry := newFstabEntry(map[string]any{"name": a.Get("name"), "device": strings.ReplaceAll(a.Str("device"), `\ `, `\040`),
		"fstype": a.Get("fstype"), "opts": strings.ReplaceAll(pyfmt.Str(opts), `\ `, `\040`), "dump": a.Get("dump"), "pass_num": a.Get("pass_num")})
	var matchOn []string
	switch m := a.Get("match_on").(type) {
	case []any:
		for _, x := range m {
			matchOn = append(matchOn, pyfmt.Str(x))
		}
	case string:
		if m == "auto" {
			if mountSpecialFS[a.Str("fstype")] {
				matchOn = []string{"name"}
			} else {
				matchOn = []string{"device"}
			}
		} else {
			matchOn = []string{m}
		}
	default:
		return nil, fmt.Errorf("%w: match_on must be a string or list of strings", modules.ErrExecution)
	}
	crit := fstabEntry{}
	for _, k := range matchOn {
		v, ok := entry[k]
		if !ok {
			return nil, fmt.Errorf("%w: Unrecognized keys in match_on: \"<filter object>\"", modules.ErrExecution)
		}
		crit[k] = v
	}
	config := a.Str("config")
	if st, err := os.Stat(config); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: Bad config file \"%s\"", modules.ErrExecution, config)
	}
	b, err := readBounded(config, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: Couldn't read from %s: %s", modules.ErrExecution, config, pyOSErrorText(err))
	}
	var lines []string
	ret := ""
	for _, line := range py.FileLines(string(b)) {
		ok, err := crit.match(line)
		if err != nil || !ok {
			lines = append(lines, line)
			continue
		}
		ret = "present"
		if same, _ := entry.match(line); same || payload.Truthy(a.Get("not_change")) {
			lines = append(lines, line)
		} else {
			ret = "change"
			lines = append(lines, entry.String())
		}
	}
	if ret == "" {
		lines = append(lines, entry.String())
		ret = "new"
	}
	if ret != "present" && !testMode(a.Get("test"), a.Kwargs) {
		if err := os.WriteFile(config, []byte(strings.Join(lines, "")), 0o644); err != nil {
			return nil, fmt.Errorf("%w: File not writable %s", modules.ErrExecution, config)
		}
	}
	return ret, nil
}

// testMode is salt.utils.args.test_mode: test, or a truthy kwarg named
// "test" in any case.
func testMode(test any, kwargs *payload.Map) bool {
	if payload.Truthy(test) {
		return true
	}
	if kwargs != nil {
		for _, it := range kwargs.Items() {
			if strings.EqualFold(payload.KeyString(it.Key), "test") && payload.Truthy(it.Value) {
				return true
			}
		}
	}
	return false
}
