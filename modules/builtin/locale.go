package builtin

import (
	"context"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// localeFunctions is the reading part of Salt's localemod module (the
// locale virtual module).
func localeFunctions() []modules.Function {
	return []modules.Function{
		{Name: "locale.list_avail", Doc: "Lists available (compiled) locales\n\nCLI Example:\n\n    salt '*' locale.list_avail",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := pkgRun(ctx, []string{"locale", "-a"}, pkgRunOpts{combined: true})
				if err != nil {
					return nil, err
				}
				return grainsStrList(strings.Split(res.stdout, "\n")), nil
			}},
		{Name: "locale.get_locale", Doc: "Get the current system locale\n\nCLI Example:\n\n    salt '*' locale.get_locale", Fn: localeGet},
	}
}

func localeGet(ctx context.Context, c *modules.Call) (any, error) {
	g := grainsData(c)
	family := g.Str("os_family")
	major, _ := g.Int("osmajorrelease")
	if systemdBooted(c.Env) && !(family == "Suse" && major == 12) {
		st, err := localectlStatus(ctx)
		if err != nil {
			return nil, err
		}
		if m := st.Map("system_locale"); m != nil {
			return m.Str("LANG"), nil
		}
		return "", nil
	}
	var cmd []string
	switch {
	case strings.Contains(family, "Suse"):
		cmd = []string{"grep", "^RC_LANG", "/etc/sysconfig/language"}
	case strings.Contains(family, "RedHat"):
		cmd = []string{"grep", "^LANG=", "/etc/sysconfig/i18n"}
	case strings.Contains(family, "Debian"):
		cmd = []string{"grep", "^LANG=", "/etc/default/locale"}
	case strings.Contains(family, "Gentoo"):
		res, err := pkgRun(ctx, []string{"eselect", "--brief", "locale", "show"}, pkgRunOpts{combined: true})
		if err != nil {
			return nil, err
		}
		return strings.TrimSpace(res.stdout), nil
	case strings.Contains(family, "Solaris"):
		cmd = []string{"grep", "^LANG=", "/etc/default/init"}
	default:
		return nil, fmt.Errorf("%w: Error: \"%s\" is unsupported!", modules.ErrExecution, g.Str("oscodename"))
	}
	res, err := pkgRun(ctx, cmd, pkgRunOpts{combined: true})
	if err != nil {
		return nil, err
	}
	parts := strings.Split(res.stdout, "=")
	if len(parts) < 2 {
		c.Log().Error(fmt.Sprintf("Error occurred while running \"%s\": list index out of range", strings.Join(cmd, " ")))
		return "", nil
	}
	return strings.ReplaceAll(parts[1], `"`, ""), nil
}

// localectlStatus is _localectl_status: "localectl status" as
// {key: {VAR: value}} or {key: {data: text}}.
func localectlStatus(ctx context.Context) (*payload.Map, error) {
	if _, err := which("localectl"); err != nil {
		return nil, fmt.Errorf("%w: Unable to find \"localectl\"", modules.ErrExecution)
	}
	res, err := pkgRun(ctx, []string{"localectl", "status"}, pkgRunOpts{combined: true})
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	key := ""
	for _, line := range py.SplitLines(strings.TrimSpace(res.stdout), false) {
		data := strings.TrimSpace(line)
		if k, d, ok := strings.Cut(line, ": "); ok {
			key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), " ", "_")
			data = d
		}
		if data == "" || key == "" {
			continue
		}
		if strings.Contains(data, "=") {
			if kv := strings.Split(data, "="); len(kv) == 2 {
				m := ret.Map(key)
				if m == nil {
					m = &payload.Map{}
					ret.Set(key, m)
				}
				m.Set(kv[0], kv[1])
			}
			continue
		}
		var v any = data
		if data == "n/a" {
			v = nil
		}
		ret.Set(key, payload.NewMap("data", v))
	}
	if ret.Len() == 0 {
		return nil, fmt.Errorf("%w: Unable to parse result of \"localectl\"", modules.ErrExecution)
	}
	return ret, nil
}
