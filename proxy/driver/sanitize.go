package driver

import (
	"context"
	"regexp"
	"strings"
)

// ConfigOptions are NAPALM get_config's arguments.
type ConfigOptions struct {
	// Retrieve is "all", "running", "candidate" or "startup".
	Retrieve string
	// Full asks for the configuration with defaults ("show running-config
	// all") where the platform has it.
	Full bool
	// Sanitized removes secrets with NAPALM's per-platform patterns.
	Sanitized bool
}

// ConfigGetter is implemented by drivers whose get_config takes NAPALM's
// full and sanitized arguments.
type ConfigGetter interface {
	GetConfigWith(ctx context.Context, o ConfigOptions) (Config, error)
}

// GetConfigWith is NAPALM get_config(retrieve, full, sanitized): the
// driver's own implementation when it has one, else GetConfig with the
// platform's sanitizing patterns applied (Junos's for junos, else Cisco's).
func GetConfigWith(ctx context.Context, d Driver, o ConfigOptions) (Config, error) {
	if o.Retrieve == "" {
		o.Retrieve = "all"
	}
	if g, ok := d.(ConfigGetter); ok {
		return g.GetConfigWith(ctx, o)
	}
	c, err := d.GetConfig(ctx, o.Retrieve)
	if err != nil || !o.Sanitized {
		return c, err
	}
	if d.Platform() == "junos" {
		return SanitizeConfigs(c, JunosSanitizeFilters), nil
	}
	return SanitizeConfigs(c, CiscoSanitizeFilters), nil
}

// JunosSanitizeFilters are NAPALM junos get_config's sanitize_strings: SNMP
// communities and "$n$..." secrets.
var JunosSanitizeFilters = []SanitizeFilter{
	sf(`^(\s+community\s+)\w+(;.*|\s+{.*)$`, `${1}<removed>${2}`),
	sf(`^(.*)"\$\d\$\S+"(;.*)$`, `${1}<removed>${2}`),
}

// SanitizeFilter is one of NAPALM's sanitizing substitutions (a multi-line
// regular expression and its replacement, ${n} for groups).
type SanitizeFilter struct {
	Re   *regexp.Regexp
	Repl string
}

func sf(re, repl string) SanitizeFilter {
	return SanitizeFilter{Re: regexp.MustCompile("(?m)" + re), Repl: repl}
}

// CiscoSanitizeFilters are NAPALM's CISCO_SANITIZE_FILTERS (ios, nxos,
// iosxr), in NAPALM's order.
var CiscoSanitizeFilters = []SanitizeFilter{
	sf(`^(snmp-server community).*$`, `${1} <removed>`),
	sf(`^(snmp-server host \S+( vrf \S+)?( version (1|2c|3))?)\s+\S+((\s+\S*)*)\s*$`, `${1} <removed> ${5}`),
	sf(`^(snmp-server user \S+( \S+)? auth md5) \S+ (priv) \S+ (localizedkey( engineID \S+)?)\s*$`, `${1} <removed> ${3} <removed> ${4}${5}`),
	sf(`^(username .+ (password|secret) \d) .+$`, `${1} <removed>`),
	sf(`^(enable (password|secret)( level \d+)? \d) .+$`, `${1} <removed>`),
	sf(`^(\s+(?:password|secret)) (?:\d{1,2} )?\S+$`, `${1} <removed>`),
	sf(`^(.*wpa-psk ascii \d) (\S+)$`, `${1} <removed>`),
	sf(`^(.*key 7) (\d.+)$`, `${1} <removed>`),
	sf(`^(tacacs-server (.+ )?key) .+$`, `${1} <removed>`),
	sf(`^(crypto isakmp key) (\S+) (.*)$`, `${1} <removed> ${3}`),
	sf(`^(\s+ip ospf message-digest-key \d+ md5) .+$`, `${1} <removed>`),
	sf(`^(\s+ip ospf authentication-key) .+$`, `${1} <removed>`),
	sf(`^(\s+neighbor \S+ password) .+$`, `${1} <removed>`),
	sf(`^(\s+vrrp \d+ authentication text) .+$`, `${1} <removed>`),
	sf(`^(\s+standby \d+ authentication) .{1,8}$`, `${1} <removed>`),
	sf(`^(\s+standby \d+ authentication md5 key-string) .+?( timeout \d+)?$`, `${1} <removed> ${2}`),
	sf(`^(\s+key-string) .+$`, `${1} <removed>`),
	sf(`^((tacacs|radius) server [^\n]+\n(\s+[^\n]+\n)*\s+key) [^\n]+$`, `${1} <removed>`),
	sf(`^(\s+ppp (chap|pap) password \d) .+$`, `${1} <removed>`),
}

// EOSSanitizeFilters are NAPALM's EOS_SANITIZE_FILTERS: the Cisco ones and
// two of EOS's own.
var EOSSanitizeFilters = append(append([]SanitizeFilter{}, CiscoSanitizeFilters...),
	sf(`^(\s+aaa root secret \d) .+$`, `${1} <removed>`),
	sf(`^(\s+username .+ (password|secret) \d) .+$`, `${1} <removed>`),
)

// SanitizeConfig applies filters to one configuration text (NAPALM's
// sanitize_config).
func SanitizeConfig(config string, filters []SanitizeFilter) string {
	for _, f := range filters {
		config = f.Re.ReplaceAllString(config, f.Repl)
	}
	return config
}

// SanitizeConfigs applies filters to the non-blank texts of c (NAPALM's
// sanitize_configs).
func SanitizeConfigs(c Config, filters []SanitizeFilter) Config {
	for _, p := range []*string{&c.Running, &c.Candidate, &c.Startup} {
		if strings.TrimSpace(*p) != "" {
			*p = SanitizeConfig(*p, filters)
		}
	}
	return c
}
