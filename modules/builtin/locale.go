package builtin

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"

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
		{Name: "locale.avail", Spec: modules.Spec{Params: []modules.Param{req("locale")}},
			Doc: "Check if a locale is available.\n\nCLI Example:\n\n    salt '*' locale.avail 'en_US.UTF-8'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				want := localeNormalize(pyfmt.Str(c.Args.Get("locale")))
				res, err := pkgRun(ctx, []string{"locale", "-a"}, pkgRunOpts{combined: true})
				if err != nil {
					return nil, err
				}
				for _, l := range strings.Split(res.stdout, "\n") {
					if localeNormalize(strings.TrimSpace(l)) == want {
						return true, nil
					}
				}
				return false, nil
			}},
		{Name: "locale.gen_locale", Spec: modules.Spec{Params: []modules.Param{req("locale")}, Kwargs: true},
			Doc: "Generate a locale (Debian and Gentoo need the charmap, e.g. 'en_US.UTF-8 UTF-8').\n\nCLI Example:\n\n    salt '*' locale.gen_locale en_US.UTF-8",
			Fn:  localeGen},
		{Name: "locale.set_locale", Spec: modules.Spec{Params: []modules.Param{req("locale")}},
			Doc: "Sets the current system locale\n\nCLI Example:\n\n    salt '*' locale.set_locale 'en_US.UTF-8'",
			Fn:  localeSet},
	}
}

// localeParts is salt.utils.locales.split_locale:
// language[_territory][.codeset][@modifier][ charmap].
type localeParts struct{ language, territory, codeset, modifier, charmap string }

func localeSplit(loc string) localeParts {
	var p localeParts
	work, cm, _ := strings.Cut(loc, " ")
	p.charmap = cm
	work, p.modifier, _ = strings.Cut(work, "@")
	work, p.codeset, _ = strings.Cut(work, ".")
	p.language, p.territory, _ = strings.Cut(work, "_")
	return p
}

func (p localeParts) join() string {
	s := p.language
	if p.territory != "" {
		s += "_" + p.territory
	}
	if p.codeset != "" {
		s += "." + p.codeset
	}
	if p.modifier != "" {
		s += "@" + p.modifier
	}
	if p.charmap != "" {
		s += " " + p.charmap
	}
	return s
}

// localeNormalize is normalize_locale: the form `locale -a` prints.
func localeNormalize(loc string) string {
	p := localeSplit(loc)
	p.territory = strings.ToUpper(p.territory)
	p.codeset = strings.ReplaceAll(strings.ToLower(p.codeset), "-", "")
	p.charmap = ""
	return p.join()
}

// localeReplace is file.replace(path, pattern, repl,
// append_if_not_found=True) for line patterns.
func localeReplace(path string, re *regexp.Regexp, repl string) error {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	text := string(b)
	var out string
	if re.MatchString(text) {
		out = re.ReplaceAllLiteralString(text, repl)
	} else {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		out = text + repl
		if !strings.HasSuffix(repl, "\n") {
			out += "\n"
		}
	}
	if out == string(b) {
		return nil
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return nil
}

// localeGen is gen_locale on Linux.
func localeGen(ctx context.Context, c *modules.Call) (any, error) {
	g := grainsData(c)
	loc := pyfmt.Str(c.Args.Get("locale"))
	onDebian, onUbuntu := g.Str("os") == "Debian", g.Str("os") == "Ubuntu"
	onGentoo, onSuse := g.Str("os_family") == "Gentoo", g.Str("os_family") == "Suse"
	p := localeSplit(loc)
	search := p.language + "_" + p.territory
	if p.charmap == "" && !onUbuntu {
		p.charmap = p.codeset
		loc = p.join()
	}
	var valid bool
	var where string
	if onDebian || onGentoo {
		where = "/usr/share/i18n/SUPPORTED"
		b, err := os.ReadFile(where)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		for _, l := range py.SplitLines(string(b), false) {
			if l == loc {
				valid = true
			}
		}
	} else {
		where = "/usr/share/i18n/locales"
		if onSuse {
			where = "/usr/share/locale"
		}
		ents, err := os.ReadDir(where)
		if err != nil {
			c.Log().Error(err.Error())
			return nil, fmt.Errorf("%w: Locale \"%s\" is not available.", modules.ErrExecution, loc)
		}
		for _, e := range ents {
			valid = valid || e.Name() == search
		}
	}
	if !valid {
		c.Log().Error(fmt.Sprintf("The provided locale \"%s\" is not found in %s", loc, where))
		return false, nil
	}
	if _, err := os.Stat("/etc/locale.gen"); err == nil {
		re := regexp.MustCompile(`(?m)^\s*#\s*` + regexp.QuoteMeta(loc) + `\s*$`)
		if err := localeReplace("/etc/locale.gen", re, loc+"\n"); err != nil {
			return nil, err
		}
	}
	var argv []string
	if _, err := which("locale-gen"); err == nil {
		argv = []string{"locale-gen"}
		if onGentoo {
			argv = append(argv, "--generate")
		}
		if onUbuntu {
			argv = append(argv, localeNormalize(loc))
		} else {
			argv = append(argv, loc)
		}
	} else if _, err := which("localedef"); err == nil {
		v := "--quiet"
		if payload.Truthy(c.Args.Get("verbose")) {
			v = "--verbose"
		}
		argv = []string{"localedef", "--force", "-i", search, "-f", p.codeset, search + "." + p.codeset, v}
	} else {
		return nil, fmt.Errorf("%w: Command \"locale-gen\" or \"localedef\" was not found on this system.", modules.ErrExecution)
	}
	res, err := pkgRun(ctx, argv, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	if res.retcode != 0 {
		c.Log().Error(res.stderr)
	}
	if payload.Truthy(c.Args.Get("verbose")) {
		return payload.NewMap("retcode", int64(res.retcode), "stdout", res.stdout, "stderr", res.stderr), nil
	}
	return res.retcode == 0, nil
}

// localeSet is set_locale: localectl under systemd, else the
// distribution's file.
func localeSet(ctx context.Context, c *modules.Call) (any, error) {
	g := grainsData(c)
	family := g.Str("os_family")
	major, _ := g.Int("osmajorrelease")
	loc := pyfmt.Str(c.Args.Get("locale"))
	if systemdBooted(c.Env) && !(family == "Suse" && major == 12) {
		st, err := localectlStatus(ctx)
		if err != nil {
			return nil, err
		}
		params := st.Map("system_locale")
		if params == nil {
			params = &payload.Map{}
		}
		params = params.Clone()
		params.Set("LANG", loc)
		argv := []string{"localectl", "set-locale"}
		for _, it := range params.Items() {
			if it.Value != nil {
				argv = append(argv, fmt.Sprintf(`%s="%s"`, payload.KeyString(it.Key), pyfmt.Str(it.Value)))
			}
		}
		res, err := pkgRun(ctx, argv, pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		return res.retcode == 0, nil
	}
	line := func(key string) (*regexp.Regexp, string) {
		return regexp.MustCompile(`(?m)^` + key + `=.*`), key + `="` + loc + `"`
	}
	switch {
	case strings.Contains(family, "Suse"):
		re, l := line("RC_LANG")
		return true, localeReplace("/etc/sysconfig/language", re, l)
	case strings.Contains(family, "RedHat"):
		re, l := line("LANG")
		return true, localeReplace("/etc/sysconfig/i18n", re, l)
	case strings.Contains(family, "Debian"):
		bin, err := which("update-locale")
		if err != nil {
			return nil, fmt.Errorf("%w: Cannot set locale: \"update-locale\" was not found.", modules.ErrExecution)
		}
		if _, err := pkgRun(ctx, []string{bin}, pkgRunOpts{}); err != nil {
			return nil, err
		}
		re, l := line("LANG")
		return true, localeReplace("/etc/default/locale", re, l)
	case strings.Contains(family, "Gentoo"):
		res, err := pkgRun(ctx, []string{"eselect", "--brief", "locale", "set", loc}, pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		return res.retcode == 0, nil
	}
	return nil, fmt.Errorf("%w: Error: Unsupported platform!", modules.ErrExecution)
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
