package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"io/fs"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxHostsFile bounds the hosts file read into memory.
const maxHostsFile = 64 << 20

// hostsFunctions is Salt's hosts module (salt/modules/hosts.py) on the
// file named by the hosts.file option (/etc/hosts by default).
func hostsFunctions() []modules.Function {
	return []modules.Function{
		{Name: "hosts.list_hosts", Doc: "Return the hosts found in the hosts file in this format::\n\n    {'<ip addr>': ['alias1', 'alias2', ...]}\n\nCLI Example:\n\n    salt '*' hosts.list_hosts",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return hostsList(c) }},
		{Name: "hosts.get_ip", Spec: modules.Spec{Params: []modules.Param{req("host")}},
			Doc: "Return the ip associated with the named host\n\nCLI Example:\n\n    salt '*' hosts.get_ip <hostname>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				hosts, err := hostsList(c)
				if err != nil {
					return nil, err
				}
				for _, it := range hosts.Items() {
					if m, ok := it.Value.(*payload.Map); ok {
						for _, a := range m.List("aliases") {
							if pyEq(a, c.Args.Get("host")) {
								return it.Key, nil
							}
						}
					}
				}
				return "", nil
			}},
		{Name: "hosts.get_alias", Spec: modules.Spec{Params: []modules.Param{req("ip")}},
			Doc: "Return the list of aliases associated with an ip\n\nAliases (host names) are returned in the order in which they\nappear in the hosts file.  If there are no aliases associated with\nthe IP, an empty list is returned.\n\nCLI Example:\n\n    salt '*' hosts.get_alias <ip addr>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				hosts, err := hostsList(c)
				if err != nil {
					return nil, err
				}
				if v, ok := hosts.GetKey(c.Args.Get("ip")); ok {
					if m, ok := v.(*payload.Map); ok {
						return m.List("aliases"), nil
					}
					return nil, errors.New("TypeError: list indices must be integers or slices, not str")
				}
				return []any{}, nil
			}},
		{Name: "hosts.has_pair", Spec: modules.Spec{Params: []modules.Param{req("ip"), req("alias")}},
			Doc: "Return true if the alias is set\n\nCLI Example:\n\n    salt '*' hosts.has_pair <ip> <alias>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				hosts, err := hostsList(c)
				if err != nil {
					return nil, err
				}
				return hostsHasPair(hosts, c.Args.Get("ip"), c.Args.Get("alias")), nil
			}},
		{Name: "hosts.set_host", Spec: modules.Spec{Params: []modules.Param{req("ip"), req("alias"), opt("comment", nil)}},
			Doc: "Set the host entry in the hosts file for the given ip, this will overwrite\nany previous entry for the given ip\n\nIf ``alias`` does not include any host names (it is the empty\nstring or contains only whitespace), all entries for the given\nIP address are removed.\n\nCLI Example:\n\n    salt '*' hosts.set_host <ip> <alias>",
			Fn:  hostsSetHost},
		{Name: "hosts.rm_host", Spec: modules.Spec{Params: []modules.Param{req("ip"), req("alias")}},
			Doc: "Remove a host entry from the hosts file\n\nCLI Example:\n\n    salt '*' hosts.rm_host <ip> <alias>",
			Fn:  hostsRmHost},
		{Name: "hosts.add_host", Spec: modules.Spec{Params: []modules.Param{req("ip"), req("alias")}},
			Doc: "Add a host to an existing entry, if the entry is not in place then create\nit with the given host\n\nCLI Example:\n\n    salt '*' hosts.add_host <ip> <alias>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				hfn, err := hostsCreateFile(c)
				if err != nil {
					return nil, err
				}
				if st, err := os.Stat(hfn); err != nil || !st.Mode().IsRegular() {
					return false, nil
				}
				hosts, err := hostsList(c)
				if err != nil {
					return nil, err
				}
				ip, alias := c.Args.Get("ip"), c.Args.Get("alias")
				if hostsHasPair(hosts, ip, alias) {
					return true, nil
				}
				entry := hostsEntry(hosts, ip)
				if entry == nil {
					return nil, errors.New("AttributeError: 'list' object has no attribute 'setdefault'")
				}
				entry.Set("aliases", append(entry.List("aliases"), alias))
				return true, hostsWrite(hfn, hosts)
			}},
		{Name: "hosts.set_comment", Spec: modules.Spec{Params: []modules.Param{req("ip"), req("comment")}},
			Doc: "Set the comment for a host to an existing entry,\nif the entry is not in place then return False\n\nCLI Example:\n\n    salt '*' hosts.set_comment <ip> <comment>",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				hfn, err := hostsCreateFile(c)
				if err != nil {
					return nil, err
				}
				if st, err := os.Stat(hfn); err != nil || !st.Mode().IsRegular() {
					return false, nil
				}
				hosts, err := hostsList(c)
				if err != nil {
					return nil, err
				}
				v, ok := hosts.GetKey(c.Args.Get("ip"))
				if !ok {
					return false, nil
				}
				entry, ok := v.(*payload.Map)
				if !ok {
					return nil, errors.New("TypeError: list indices must be integers or slices, not str")
				}
				if cur, has := entry.Get("comment"); has && pyEq(cur, c.Args.Get("comment")) {
					return true, nil
				}
				entry.Set("comment", c.Args.Get("comment"))
				return true, hostsWrite(hfn, hosts)
			}},
	}
}

func pyEq(a, b any) bool { return pyfmt.Equal(a, b) }

// hostsFile is config.option("hosts.file").
func hostsFile(c *modules.Call) string {
	v := configOptionValue(c, "hosts.file", "/etc/hosts")
	if v == nil {
		return ""
	}
	return payload.Text(v)
}

// hostsCreateFile is _get_or_create_hostfile.
func hostsCreateFile(c *modules.Call) (string, error) {
	hfn := hostsFile(c)
	if _, err := os.Stat(hfn); err != nil {
		f, err := os.OpenFile(hfn, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		_ = f.Close()
	}
	return hfn, nil
}

// hostsList is _list_hosts: ip -> {aliases, comment}, and each comment
// line under "comment-N".
func hostsList(c *modules.Call) (*payload.Map, error) {
	ret := &payload.Map{}
	hfn := hostsFile(c)
	b, err := readBounded(hfn, maxHostsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ret, nil
		}
		return nil, fmt.Errorf("%w: Error reading %s: %w", modules.ErrExecution, hfn, err)
	}
	count := 0
	for _, line := range py.FileLines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			key := fmt.Sprintf("comment-%d", count)
			l, _ := ret.Get(key)
			list, _ := l.([]any)
			ret.Set(key, append(list, line))
			count++
			continue
		}
		comment := ""
		hasComment := false
		if i := strings.IndexByte(line, '#'); i >= 0 {
			comment = strings.TrimLeft(line[i+1:], " \t\n\r\v\f")
			hasComment = comment != ""
			line = strings.TrimSpace(line[:i])
		}
		comps := strings.Fields(line)
		entry := hostsEntry(ret, comps[0])
		if entry == nil {
			return nil, errors.New("AttributeError: 'list' object has no attribute 'setdefault'")
		}
		aliases := entry.List("aliases")
		if aliases == nil {
			aliases = []any{}
		}
		for _, a := range comps[1:] {
			aliases = append(aliases, a)
		}
		entry.Set("aliases", aliases)
		if hasComment {
			entry.Set("comment", comment)
		}
	}
	return ret, nil
}

// hostsEntry is hosts.setdefault(ip, {}) (nil when ip holds a comment
// list).
func hostsEntry(hosts *payload.Map, ip any) *payload.Map {
	v, ok := hosts.GetKey(ip)
	if !ok {
		m := &payload.Map{}
		hosts.SetKey(ip, m)
		return m
	}
	m, _ := v.(*payload.Map)
	return m
}

// hostsHasPair is has_pair.
func hostsHasPair(hosts *payload.Map, ip, alias any) bool {
	v, ok := hosts.GetKey(ip)
	if !ok {
		return false
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return false
	}
	aliases, has := m.Get("aliases")
	if !has {
		return false
	}
	list, _ := aliases.([]any)
	contains := func(x any) bool {
		for _, a := range list {
			if pyEq(a, x) {
				return true
			}
		}
		return false
	}
	if want, ok := alias.([]any); ok {
		for _, w := range want {
			if !contains(w) {
				return false
			}
		}
		return true
	}
	return contains(alias)
}

// hostsWrite is _write_hosts: every entry rewritten one per line.
func hostsWrite(hfn string, hosts *payload.Map) error {
	var out strings.Builder
	for _, it := range hosts.Items() {
		ip := payload.KeyString(it.Key)
		var line string
		if strings.HasPrefix(ip, "comment") {
			for _, l := range it.Value.([]any) {
				line += payload.Text(l)
			}
		} else {
			m := it.Value.(*payload.Map)
			var aliases []string
			for _, a := range m.List("aliases") {
				aliases = append(aliases, pyfmt.Str(a))
			}
			if cm, ok := m.Get("comment"); ok {
				line = fmt.Sprintf("%s\t\t%s\t\t# %s", ip, strings.Join(aliases, " "), pyfmt.Str(cm))
			} else {
				line = fmt.Sprintf("%s\t\t%s", ip, strings.Join(aliases, " "))
			}
		}
		if strings.TrimSpace(line) != "" {
			out.WriteString(strings.TrimSpace(line) + "\n")
		}
	}
	if err := os.WriteFile(hfn, []byte(out.String()), 0o644); err != nil {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return nil
}

func hostsSetHost(_ context.Context, c *modules.Call) (any, error) {
	hfn, err := hostsCreateFile(c)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(hfn); err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	ip, alias := c.Args.Str("ip"), c.Args.Str("alias")
	var add []byte
	if cm := c.Args.Get("comment"); payload.Truthy(cm) {
		add = []byte(ip + "\t\t" + alias + "\t\t# " + payload.Text(cm) + "\n")
	} else {
		add = []byte(ip + "\t\t" + alias + "\n")
	}
	if strings.TrimSpace(alias) == "" {
		add = nil
	}
	b, err := readBounded(hfn, maxHostsFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	lines := splitKeepNL(b)
	ovr := false
	for i, l := range lines {
		tl := bytes.TrimSpace(l)
		if len(tl) == 0 || tl[0] == '#' {
			continue
		}
		if string(bytes.Fields(tl)[0]) == ip {
			if !ovr {
				lines[i] = add
				ovr = true
			} else {
				lines[i] = nil
			}
		}
	}
	if !ovr {
		if n := len(lines); n > 0 && !bytes.HasSuffix(lines[n-1], []byte("\n")) {
			lines[n-1] = append(lines[n-1], '\n')
		}
		lines = append(lines, add)
	}
	if err := os.WriteFile(hfn, bytes.Join(lines, nil), 0o644); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return true, nil
}

func hostsRmHost(_ context.Context, c *modules.Call) (any, error) {
	hosts, err := hostsList(c)
	if err != nil {
		return nil, err
	}
	if !hostsHasPair(hosts, c.Args.Get("ip"), c.Args.Get("alias")) {
		return true, nil
	}
	hfn, err := hostsCreateFile(c)
	if err != nil {
		return nil, err
	}
	b, err := readBounded(hfn, maxHostsFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	ip, alias := []byte(c.Args.Str("ip")), []byte(c.Args.Str("alias"))
	lines := splitKeepNL(b)
	for i, l := range lines {
		tl := bytes.TrimSpace(l)
		if len(tl) == 0 || tl[0] == '#' {
			continue
		}
		hostInfo := tl
		var comment []byte
		if n := bytes.Count(tl, []byte("#")); n > 0 {
			if n > 1 {
				return nil, errors.New("ValueError: too many values to unpack (expected 2)")
			}
			parts := bytes.SplitN(tl, []byte("#"), 2)
			hostInfo, comment = parts[0], bytes.TrimLeft(parts[1], " \t\n\r\v\f")
		}
		comps := bytes.Fields(hostInfo)
		if !bytes.Equal(comps[0], ip) {
			continue
		}
		newline := append(append([]byte{}, comps[0]...), "\t\t"...)
		for _, e := range comps[1:] {
			if bytes.Equal(e, alias) {
				continue
			}
			newline = append(append(newline, e...), ' ')
		}
		switch {
		case bytes.Equal(bytes.TrimSpace(newline), ip):
			lines[i] = nil
		case len(comment) > 0:
			lines[i] = append(append(append(newline, "# "...), comment...), '\n')
		default:
			lines[i] = append(newline, '\n')
		}
	}
	if err := os.WriteFile(hfn, bytes.Join(lines, nil), 0o644); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return true, nil
}

// splitKeepNL is Python's readlines on bytes: lines keep their "\n".
func splitKeepNL(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// readBounded reads a file of at most max bytes.
func readBounded(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, max)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
