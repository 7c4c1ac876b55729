package scraplitest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/scrapli/scrapligo/channel"
	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/opoptions"
)

// scrapligo v1 dropped the cfg package of scrapligo v0 (removed in commit 321f842, "huge v1.0.0-beta
// overhaul"). iosxeCfg and eosCfg replay, through the v1 network driver, exactly the device
// commands v0's cfg/ciscoiosxe.go and cfg/aristaeos.go sent for GetVersion, GetConfig,
// LoadConfig, DiffConfig, CommitConfig and AbortConfig.

var bytesFree = regexp.MustCompile(`(?i)(\d+)(?: bytes free)`)

type iosxeCfg struct {
	d         *network.Driver
	candidate string
	replace   bool
}

func (c *iosxeCfg) getVersion() (string, error) {
	r, err := c.d.SendCommand("show version | i Version")
	if err != nil {
		return "", err
	}
	return regexp.MustCompile(`(?i)\d+\.[a-z0-9\(\).]+`).FindString(r.Result), nil
}

func (c *iosxeCfg) getConfig(source string) (string, error) {
	r, err := c.d.SendCommand("show " + source + "-config")
	if err != nil {
		return "", err
	}
	if r.Failed != nil {
		return "", r.Failed
	}
	return r.Result, nil
}

func (c *iosxeCfg) loadConfig(cfg string, replace bool) error {
	c.replace = replace
	r, err := c.d.SendCommand("dir flash: | i bytes")
	if err != nil {
		return err
	}
	m := bytesFree.FindStringSubmatch(r.Result)
	if m == nil {
		return fmt.Errorf("no bytes free in %q", r.Result)
	}
	if n, _ := strconv.Atoi(m[1]); n < len(cfg) {
		return fmt.Errorf("insufficient space")
	}
	payload := strings.Join([]string{`puts [open "flash:` + c.candidate + `" w+] {`, cfg, "}"}, "\n")
	if err := c.d.AcquirePriv("tclsh"); err != nil {
		return err
	}
	orig := c.d.Channel.ReturnChar
	c.d.Channel.ReturnChar = []byte("\r")
	defer func() { c.d.Channel.ReturnChar = orig }()
	r, err = c.d.SendConfig(payload, opoptions.WithPrivilegeLevel("tclsh"))
	if err != nil {
		return err
	}
	if r.Failed != nil {
		return r.Failed
	}
	return c.d.AcquirePriv(c.d.DefaultDesiredPriv)
}

func (c *iosxeCfg) filePromptMode() (string, error) {
	r, err := c.d.SendCommand("show run | i file prompt")
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?i)(?:file prompt )(\w+)`).FindString(r.Result)
	switch {
	case m == "":
		return "alert", nil
	case strings.Contains(m, "noisy"):
		return "noisy", nil
	}
	return "quiet", nil
}

// interactive runs a copy/delete with the events v0 cfg used for the device's file prompt mode.
// v0 passed "[confirm]" unescaped, which as a regular expression is a character class; the
// pattern is escaped here so the event really waits for the confirmation prompt.
func (c *iosxeCfg) interactive(input string, prompts ...string) error {
	events := []*channel.SendInteractiveEvent{{ChannelInput: input, ChannelResponse: firstOr(prompts, "")}}
	for i := range prompts {
		events = append(events, &channel.SendInteractiveEvent{ChannelResponse: firstOr(prompts[i+1:], "")})
	}
	r, err := c.d.SendInteractive(events)
	if err != nil {
		return err
	}
	return r.Failed
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

func (c *iosxeCfg) filePrompts(input, src, dst string) error {
	mode, err := c.filePromptMode()
	if err != nil {
		return err
	}
	switch mode {
	case "alert":
		return c.interactive(input, dst)
	case "noisy":
		return c.interactive(input, src, dst)
	}
	return c.interactive(input)
}

func (c *iosxeCfg) deleteCandidate() error {
	mode, err := c.filePromptMode()
	if err != nil {
		return err
	}
	in := "delete flash:" + c.candidate
	if mode == "quiet" {
		return c.interactive(in, `\[confirm\]`)
	}
	return c.interactive(in, "Delete filename", `\[confirm\]`)
}

func (c *iosxeCfg) diffConfig() (string, error) {
	cmd := "show archive config incremental-diffs flash:" + c.candidate + " ignorecase"
	if c.replace {
		cmd = "show archive config differences system:running-config flash:" + c.candidate
	}
	r, err := c.d.SendCommand(cmd)
	if err != nil {
		return "", err
	}
	if r.Failed != nil {
		return "", r.Failed
	}
	if _, err := c.getConfig("running"); err != nil {
		return "", err
	}
	return r.Result, nil
}

func (c *iosxeCfg) commitConfig() error {
	if c.replace {
		r, err := c.d.SendCommand("configure replace flash:" + c.candidate + " force")
		if err != nil {
			return err
		}
		if r.Failed != nil {
			return r.Failed
		}
	} else if err := c.filePrompts("copy flash:"+c.candidate+" running-config", "Source filename", "Destination filename"); err != nil {
		return err
	}
	if err := c.filePrompts("copy running-config startup-config", "Source filename", "Destination filename"); err != nil {
		return err
	}
	return c.deleteCandidate()
}

func (c *iosxeCfg) abortConfig() error { return c.deleteCandidate() }

type eosCfg struct {
	d       *network.Driver
	session string
}

func (c *eosCfg) getVersion() (string, error) {
	r, err := c.d.SendCommand("show version | i Software image version")
	if err != nil {
		return "", err
	}
	return regexp.MustCompile(`(?i)\d+\.\d+\.[a-z0-9\-]+(\.\d+[a-z]?)?`).FindString(r.Result), nil
}

func (c *eosCfg) register() {
	if _, ok := c.d.PrivilegeLevels[c.session]; ok {
		return
	}
	c.d.PrivilegeLevels[c.session] = &network.PrivilegeLevel{
		Name: c.session,
		Pattern: `(?im)^[\w.\-@()/:\s]{1,63}\(config\-s\-` + regexp.QuoteMeta(c.session[:6]) +
			`[\w.\-@_/:]{0,32}\)#\s?$`,
		PreviousPriv: "privilege-exec",
		Deescalate:   "end",
		Escalate:     "configure session " + c.session,
	}
	c.d.UpdatePrivileges()
}

func (c *eosCfg) loadConfig(cfg string, replace bool) error {
	c.register()
	cfg = regexp.MustCompile(`(?im)^! .*$`).ReplaceAllString(cfg, "!")
	cfg = regexp.MustCompile(`end$`).ReplaceAllString(cfg, "!")
	if replace {
		r, err := c.d.SendConfig("rollback clean-config", opoptions.WithPrivilegeLevel(c.session))
		if err != nil {
			return err
		}
		if r.Failed != nil {
			return r.Failed
		}
	}
	r, err := c.d.SendConfig(cfg, opoptions.WithPrivilegeLevel(c.session))
	if err != nil {
		return err
	}
	return r.Failed
}

func (c *eosCfg) diffConfig() (string, error) {
	r, err := c.d.SendConfig("show session-config diffs", opoptions.WithPrivilegeLevel(c.session))
	if err != nil {
		return "", err
	}
	if r.Failed != nil {
		return "", r.Failed
	}
	if _, err := c.d.SendCommand("show running-config"); err != nil {
		return "", err
	}
	return r.Result, nil
}

func (c *eosCfg) commitConfig() error {
	m, err := c.d.SendCommands([]string{"configure session " + c.session + " commit", "copy running-config startup-config"})
	if err != nil {
		return err
	}
	return m.Failed
}

func (c *eosCfg) abortConfig() error {
	if err := c.d.AcquirePriv(c.session); err != nil {
		return err
	}
	if _, err := c.d.Channel.SendInput("abort"); err != nil {
		return err
	}
	c.d.CurrentPriv = "privilege-exec"
	return nil
}
