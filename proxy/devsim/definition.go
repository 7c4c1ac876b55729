package devsim

import (
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"
)

// builtinPlatforms holds the platform definitions shipped with devsim: one folder per platform
// with a platform.yaml and the text/template files it names.
//
//go:embed platforms
var builtinPlatforms embed.FS

// ErrPlatform reports a platform definition devsim cannot use.
var ErrPlatform = errors.New("devsim: bad platform definition")

// platformDef is the YAML form of a platform (platforms/<name>/platform.yaml).
type platformDef struct {
	// Grammar names the Go configuration grammar (word lists, block openers, rendering,
	// configuration-mode prompts): ios, eos, nxos or iosxr.
	Grammar string   `yaml:"grammar"`
	Banner  string   `yaml:"banner"`
	Filters []string `yaml:"filters"`
	Prompts struct {
		Prefix     string `yaml:"prefix"`      // before the hostname ("RP/0/RP0/CPU0:")
		User       string `yaml:"user"`        // user exec suffix (">")
		NoHostname string `yaml:"no_hostname"` // hostname shown when none is configured
		LoginMode  string `yaml:"login_mode"`  // "user" (default) or "enable"
	} `yaml:"prompts"`
	Terminal struct {
		DefaultLength int `yaml:"default_length"`
		MinWidth      int `yaml:"min_width"`
		MaxWidth      int `yaml:"max_width"`
		EnableTries   int `yaml:"enable_tries"`
	} `yaml:"terminal"`
	Errors   map[string]string `yaml:"errors"`
	Messages map[string]string `yaml:"messages"`
	// InvalidCaret puts a caret line under the offending word before errors.invalid.
	InvalidCaret bool `yaml:"invalid_caret"`
	Interfaces   struct {
		Mgmt        string      `yaml:"mgmt"`
		Next        string      `yaml:"next"`
		Prev        string      `yaml:"prev"`
		Spare       string      `yaml:"spare"`
		HostPort    string      `yaml:"host_port"` // always up (a host is cabled to it)
		LoopbackMTU int         `yaml:"loopback_mtu"`
		Types       []ifTypeDef `yaml:"types"`
	} `yaml:"interfaces"`
	Filesystems []string `yaml:"filesystems"`
	// VRF says which configuration lines define VRFs and make interfaces members of one.
	VRF struct {
		Blocks  []string `yaml:"blocks"`  // "vrf definition": a block "vrf definition NAME" is a VRF
		Members []string `yaml:"members"` // "vrf forwarding": an interface line "vrf forwarding NAME"
		Skip    string   `yaml:"skip"`    // a VRF block name shown apart ("management" on NX-OS)
	} `yaml:"vrf"`
	// Identity is how devices of the platform number their hardware.
	Identity struct {
		MACPrefix  string `yaml:"mac_prefix"`  // the first 7 characters of a Cisco-dotted MAC ("5254.00")
		Serial     string `yaml:"serial"`      // a Printf format of the device number (from 1)
		SSHVersion string `yaml:"ssh_version"` // the SSH server version string
	} `yaml:"identity"`
	// ExecInConfig lists exec words accepted in configuration mode; ExecInConfigPrefix accepts
	// their unique abbreviations of two letters or more.
	ExecInConfig       []string        `yaml:"exec_in_config"`
	ExecInConfigPrefix bool            `yaml:"exec_in_config_prefix"`
	Features           map[string]bool `yaml:"features"`
	ConfigHeader       string          `yaml:"config_header"`  // template file of the configuration file header
	StartupConfig      string          `yaml:"startup_config"` // template file of each device's startup configuration
	Commands           []commandDef    `yaml:"commands"`
}

// ifTypeDef is one interface type in platform.yaml.
type ifTypeDef struct {
	Long      string `yaml:"long"`
	Short     string `yaml:"short"`
	Creatable bool   `yaml:"creatable"`
	MAC       bool   `yaml:"mac"`
}

// commandDef is one exec command in platform.yaml: a pattern and either a Go handler or a
// template file.
type commandDef struct {
	Cmd      string `yaml:"cmd"`
	Handler  string `yaml:"handler"`
	Template string `yaml:"template"`
	JSON     string `yaml:"json"`          // Go handler of the "| json" form
	JSONTmpl string `yaml:"json_template"` // template of the "| json" form
	Priv     bool   `yaml:"priv"`
	Show     bool   `yaml:"show"` // show-style: subject to the hang/drop faults
}

// knownFeatures lists the features a platform.yaml may switch on; each selects Go behaviour.
func knownFeatures() []string {
	return []string{
		"config_preamble",   // IOS "Building configuration..."/"Using N out of" around configuration text
		"sanitized_running", // "show running-config sanitized"
		"clean_config",      // "clean-config" as a copy/replace source
		"file_prompts",      // copy/delete ask for file names and confirmation
		"config_sessions",   // EOS configuration sessions (commit, abort, rollback clean-config)
		"two_stage_commit",  // IOS XR target configuration, commit, show timestamps
		"scp_server",        // NX-OS "scp -t" on SSH exec channels
	}
}

// loadPlatform reads platforms/<name>/platform.yaml from fsys, parses its templates and builds
// the platform. It runs once per fleet; devices share the result read-only.
func loadPlatform(fsys fs.FS, name string) (*platform, error) {
	dir := path.Join("platforms", name)
	raw, err := fs.ReadFile(fsys, path.Join(dir, "platform.yaml"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPlatform, name, err)
	}
	var def platformDef
	if err := yaml.Unmarshal(raw, &def); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPlatform, name, err)
	}
	for f := range def.Features {
		if !slices.Contains(knownFeatures(), f) {
			return nil, fmt.Errorf("%w: %s: unknown feature %q", ErrPlatform, name, f)
		}
	}
	g, ok := grammars()[def.Grammar]
	if !ok {
		return nil, fmt.Errorf("%w: %s: unknown grammar %q", ErrPlatform, name, def.Grammar)
	}
	d := g.dialect()
	if len(def.Interfaces.Types) == 0 {
		return nil, fmt.Errorf("%w: %s: no interfaces.types", ErrPlatform, name)
	}
	for _, t := range def.Interfaces.Types {
		if t.Long == "" || t.Short == "" {
			return nil, fmt.Errorf("%w: %s: interface type needs long and short names", ErrPlatform, name)
		}
		d.ifTypes = append(d.ifTypes, ifType{long: t.Long, short: t.Short, creatable: t.Creatable, mac: t.MAC})
	}
	d.loopbackMTU = cmp.Or(def.Interfaces.LoopbackMTU, 1500)
	p := &platform{
		name:           name,
		d:              d,
		def:            &def,
		filters:        def.Filters,
		banner:         def.Banner,
		defaultTermLen: def.Terminal.DefaultLength,
		maxTermWidth:   def.Terminal.MaxWidth,
		minTermWidth:   def.Terminal.MinWidth,
		noHostname:     def.Prompts.NoHostname,
		mgmtPort:       def.Interfaces.Mgmt,
		nextPort:       def.Interfaces.Next,
		prevPort:       def.Interfaces.Prev,
		sparePort:      def.Interfaces.Spare,
		errIncomplete:  def.Errors["incomplete"],
		errUnconverted: def.Errors["unconverted"],
		badSecret:      def.Errors["bad_secret"],
		configPrompt:   g.configPrompt,
		configSpecial:  func(*shell, []tok) (string, bool) { return "", false },
	}
	if g.renderBody != nil {
		p.renderBody = g.renderBody(d)
	}
	if def.Prompts.User == "" {
		def.Prompts.User = ">"
	}
	if def.Terminal.EnableTries <= 0 {
		def.Terminal.EnableTries = 3
	}
	switch def.Prompts.LoginMode {
	case "", "user":
	case "enable":
		p.loginMode = modeEnable
	default:
		return nil, fmt.Errorf("%w: %s: login_mode %q", ErrPlatform, name, def.Prompts.LoginMode)
	}
	words, prefix := def.ExecInConfig, def.ExecInConfigPrefix
	p.execInConfig = func(w string) bool {
		if prefix {
			_, ok := expandWord(w, words)
			return ok && len(w) >= 2
		}
		return slices.Contains(words, w)
	}
	if def.Features["config_sessions"] {
		p.configSpecial = eosConfigSpecial
	}
	if def.Features["two_stage_commit"] {
		p.configSpecial = xrConfigLine
	}
	if def.Features["scp_server"] {
		p.rawExec = nxosRawExec
	}
	p.tmpl = template.New(name).Funcs(templateFuncs())
	files, err := fs.Glob(fsys, path.Join(dir, "*.tmpl"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPlatform, name, err)
	}
	for _, file := range files {
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrPlatform, name, err)
		}
		if _, err := p.tmpl.New(path.Base(file)).Parse(string(src)); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrPlatform, name, err)
		}
	}
	for _, file := range []string{def.ConfigHeader, def.StartupConfig} {
		if p.tmpl.Lookup(file) == nil {
			return nil, fmt.Errorf("%w: %s: no template %q", ErrPlatform, name, file)
		}
	}
	hs := handlers()
	for _, c := range def.Commands {
		var run handler
		switch {
		case c.Handler != "" && c.Template == "":
			if run = hs[c.Handler]; run == nil {
				return nil, fmt.Errorf("%w: %s: command %q: unknown handler %q", ErrPlatform, name, c.Cmd, c.Handler)
			}
		case c.Template != "" && c.Handler == "":
			if p.tmpl.Lookup(c.Template) == nil {
				return nil, fmt.Errorf("%w: %s: command %q: no template %q", ErrPlatform, name, c.Cmd, c.Template)
			}
			tname := c.Template
			run = func(s *shell, args []string) string { return s.render(tname, args) }
		default:
			return nil, fmt.Errorf("%w: %s: command %q needs one handler or template", ErrPlatform, name, c.Cmd)
		}
		if len(strings.Fields(c.Cmd)) == 0 {
			return nil, fmt.Errorf("%w: %s: empty command", ErrPlatform, name)
		}
		if c.Show && def.Features["two_stage_commit"] {
			run = xrStamped(run)
		}
		spec := &cmdSpec{words: strings.Fields(c.Cmd), priv: c.Priv, fault: c.Show, run: run}
		if c.JSONTmpl != "" {
			if p.tmpl.Lookup(c.JSONTmpl) == nil {
				return nil, fmt.Errorf("%w: %s: command %q: no template %q", ErrPlatform, name, c.Cmd, c.JSONTmpl)
			}
			tname := c.JSONTmpl
			spec.json = func(s *shell, args []string) string { return s.render(tname, args) }
		}
		if c.JSON != "" {
			if spec.json = hs[c.JSON]; spec.json == nil {
				return nil, fmt.Errorf("%w: %s: command %q: unknown json handler %q", ErrPlatform, name, c.Cmd, c.JSON)
			}
		}
		p.exec = append(p.exec, spec)
	}
	return p, nil
}

// errText returns the platform's error text key with {name} placeholders replaced.
func (p *platform) errText(key string, kv ...string) string {
	return substitute(p.def.Errors[key], kv)
}

// msg returns the platform's message key with {name} placeholders replaced.
func (p *platform) msg(key string, kv ...string) string {
	return substitute(p.def.Messages[key], kv)
}

func substitute(s string, kv []string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		s = strings.ReplaceAll(s, "{"+kv[i]+"}", kv[i+1])
	}
	return s
}

// feature reports whether platform.yaml switches a feature on.
func (p *platform) feature(name string) bool { return p.def.Features[name] }

// templateFuncs are the functions platform templates may call.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"time": func(layout string, t time.Time) string { return t.UTC().Format(layout) },
		"pad": func(w int, s string) string { // left-justify in w columns
			if len(s) >= w {
				return s
			}
			return s + strings.Repeat(" ", w-len(s))
		},
		"rpad": func(w int, v any) string { // right-justify in w columns
			s := fmt.Sprint(v)
			if len(s) >= w {
				return s
			}
			return strings.Repeat(" ", w-len(s)) + s
		},
		"trunc": func(w int, s string) string { return s[:min(w, len(s))] },
		"itoa":  strconv.Itoa,
		"add":   func(a, b int) int { return a + b },
		"mul":   func(a, b int) int { return a * b },
		"div":   func(a, b int) int { return a / max(b, 1) },
		"mod":   func(a, b int) int { return a % max(b, 1) },
		"uptimeWords": func(d time.Duration) string {
			return uptimeWords(d, ", ", "")
		},
		"since":     uptimeSince,
		"hms":       hms,
		"join":      strings.Join,
		"hasPrefix": func(prefix, s string) bool { return strings.HasPrefix(s, prefix) },
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"minutes": func(m int) time.Duration { return time.Duration(m) * time.Minute },
	}
}
