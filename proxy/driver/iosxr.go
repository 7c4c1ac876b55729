package driver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/scrapli/scrapligo/driver/opoptions"
)

// iosxrDriver is the Cisco IOS XR driver (NAPALM's "iosxr") on scrapligo's
// cisco_iosxr platform. Getters read the device two ways: the IOS XR XML
// agent, with NAPALM's requests and parsing (iosxr_xml.go,
// iosxr_xmlget.go), and the CLI text (iosxr_getters.go). Getters only the
// agent serves (environment, MAC table, interfaces counters, SNMP, users,
// BGP configuration and neighbour detail, route_to, probes) always use it;
// optional_args xml_agent: true makes every getter, get_config, cli and
// traceroute use it, as NAPALM does; by default the others read the CLI,
// so a device without "xml agent tty" keeps answering them. Configuration
// changes always go through the CLI session described below.
//
// The candidate is kept in the driver, not on the device: every operation
// that needs it opens its own configuration session ("configure
// exclusive", which also takes the configuration lock), types the candidate
// line by line (indentation closes blocks with "exit"; "!" and "end" lines
// are dropped), does its work and leaves with "abort", so no target
// configuration or lock outlives a call and a dropped connection leaves
// nothing behind. Loading validates the candidate that way (a line IOS XR
// refuses fails the load, as NAPALM's MergeConfigException /
// ReplaceConfigException); CompareConfig is NAPALM's unified diff of "show
// running-config" against "show configuration merge" (merge) or "show
// configuration" (replace: the target becomes the whole configuration);
// CommitConfig sends "commit [replace] [confirmed N] [comment MSG]" and, when
// IOS XR refuses it, reports "show configuration failed". A second merge
// load adds to the staged merge candidate, as lines typed into one NAPALM
// session would.
//
// Confirmed commits are IOS XR's "commit confirmed N": the device rolls the
// commit back after N seconds unless a plain "commit" (ConfirmCommit, from a
// fresh configuration session) confirms it. HasPendingCommit reads "show
// configuration commit list detail" (the "Trial:" line of gsalt's
// simulator). Rollback is "rollback configuration last 1". IOS XR saves
// commits itself: there is no startup configuration ("" in GetConfig) and
// no write memory.
type iosxrDriver struct {
	base
	candidate string
	replace   bool // the staged candidate replaces the running configuration
	loaded    bool
	// xml makes every getter use the XML agent (optional_args xml_agent,
	// NAPALM's way); see iosxr_xml.go.
	xml bool
}

// NewIOSXR returns an unopened Cisco IOS XR driver.
func NewIOSXR(o Options) (Driver, error) {
	s, err := newSession("iosxr", "cisco_iosxr", o)
	if err != nil {
		return nil, err
	}
	return &iosxrDriver{base: base{s: s}, xml: optBool(o.OptionalArgs, "xml_agent", false)}, nil
}

// Capabilities implements Driver.
func (d *iosxrDriver) Capabilities() Capabilities {
	return Capabilities{HasConfirmedCommit: true, CommitMessage: true, CandidateConfig: true}
}

var (
	// xrStampRe matches the timestamp line IOS XR prints before show output.
	xrStampRe = regexp.MustCompile(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \S+$`)
	// xrQuestionRe matches IOS XR's questions: "...(yes/no/cancel)? [cancel]:", "...? [no]: ".
	xrQuestionRe = regexp.MustCompile(`(?m)\[(?:cancel|no|yes)\]:\s*$`)
)

// xrClean drops the timestamp line that starts IOS XR show output.
func xrClean(out string) string {
	trimmed := strings.TrimLeft(out, "\r\n")
	first, rest, _ := strings.Cut(trimmed, "\n")
	if xrStampRe.MatchString(strings.TrimSpace(first)) {
		return rest
	}
	return out
}

// xrConfigBody strips the headers of a configuration listing (timestamp,
// "Building configuration...", "!! ..." comment lines).
func xrConfigBody(out string) string {
	var keep []string
	for l := range strings.SplitSeq(xrClean(out), "\n") {
		l = strings.TrimRight(l, "\r")
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "Building configuration") || strings.HasPrefix(t, "!!") {
			continue
		}
		if t == "!" && len(keep) == 0 {
			// The "!" under the running config's header: the candidate
			// listing has none, so it would always show as removed.
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// xrConfigText is a configuration listing with only the timestamp and
// "Building configuration..." removed (the "!! IOS XR Configuration" header
// stays, as in NAPALM's get_config).
func xrConfigText(out string) string {
	var keep []string
	for l := range strings.SplitSeq(xrClean(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Building configuration") {
			continue
		}
		keep = append(keep, strings.TrimRight(l, "\r"))
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// xrShow runs an exec command that must succeed, without its timestamp.
func xrShow(o runner, cmd string) (string, error) {
	out, err := o.show(cmd)
	return xrClean(out), err
}

// candidateLines turns a configuration text into the lines to type: blank,
// "!", "end" and header lines dropped, an "exit" sent whenever the
// indentation closes a block.
func candidateLines(config string) []string {
	type line struct {
		ind  int
		text string
	}
	var ls []line
	for _, raw := range configLines(config) {
		t := strings.TrimSpace(raw)
		if t == "" || strings.HasPrefix(t, "!") || t == "end" || strings.HasPrefix(t, "Building configuration") ||
			xrStampRe.MatchString(t) {
			continue
		}
		ls = append(ls, line{ind: len(raw) - len(strings.TrimLeft(raw, " \t")), text: t})
	}
	var out []string
	var open []int // indentation of the blocks entered
	for i, l := range ls {
		for len(open) > 0 && l.ind <= open[len(open)-1] {
			out = append(out, "exit")
			open = open[:len(open)-1]
		}
		if l.text == "exit" {
			if len(open) > 0 {
				out = append(out, "exit")
				open = open[:len(open)-1]
			}
			continue
		}
		out = append(out, l.text)
		if i+1 < len(ls) && ls[i+1].ind > l.ind {
			open = append(open, l.ind)
		}
	}
	return out
}

// xrInput types one line in configuration mode; answer replies to a
// question the device asks ("cancel" keeps a top-level "exit" from leaving
// with uncommitted changes, "yes" confirms "commit replace").
func xrInput(o *op, line, answer string) (string, error) {
	if err := o.budget(line); err != nil {
		return "", err
	}
	o.s.log.Debug("driver: send config", "driver", o.s.name, "addr", o.s.addr, "line", line)
	interim := opoptions.WithInterimPromptPattern([]*regexp.Regexp{xrQuestionRe})
	b, err := o.d.Channel.SendInput(line, interim)
	if err != nil {
		return "", o.fail(line, err)
	}
	out := string(b)
	if xrQuestionRe.MatchString(lastLine(out)) {
		if err := o.budget(line); err != nil {
			return "", err
		}
		b, err = o.d.Channel.SendInput(answer, interim)
		if err != nil {
			return "", o.fail(line, err)
		}
		out += "\n" + string(b)
		if xrQuestionRe.MatchString(lastLine(string(b))) {
			o.fatal = true
			return "", o.s.errf(ErrCommand, line, errors.New("unexpected question from the device: "+lastLine(string(b))))
		}
	}
	return out, nil
}

// enter opens a configuration session with the configuration lock.
func (d *iosxrDriver) enter(o *op) error {
	const cmd = "configure exclusive"
	out, failed, err := o.sendRaw(cmd)
	if err != nil {
		return err
	}
	if failed || strings.Contains(out, "% ") {
		o.d.CurrentPriv = "exec"
		return o.rejected(cmd, out)
	}
	o.d.CurrentPriv = "configuration-exclusive"
	return nil
}

// leave discards what is left of the target configuration and returns to
// exec mode ("abort" never asks).
func (d *iosxrDriver) leave(o *op) error {
	_, _, err := o.sendRaw("abort")
	o.d.CurrentPriv = "exec"
	return err
}

// load types the candidate into the open configuration session.
func (d *iosxrDriver) load(o *op) error {
	for _, l := range candidateLines(d.candidate) {
		out, err := xrInput(o, l, "cancel")
		if err != nil {
			return err
		}
		if containsAny(out, o.d.FailedWhenContains) {
			kind := "merge"
			if d.replace {
				kind = "replace"
			}
			return o.s.errf(ErrCommand, kind+" candidate", fmt.Errorf("%q: %s", l, deviceMessage(out)))
		}
	}
	return nil
}

// session runs fn inside a configuration session holding the candidate
// (withCandidate) or an empty one.
func (d *iosxrDriver) session(o *op, withCandidate bool, fn func() error) error {
	if err := d.enter(o); err != nil {
		return err
	}
	var err error
	if withCandidate {
		err = d.load(o)
	}
	if err == nil && fn != nil {
		err = fn()
	}
	if o.fatal {
		return err
	}
	return errors.Join(err, d.leave(o))
}

// configShow runs a show command inside the configuration session.
func configShow(o *op, cmd string) (string, error) {
	out, failed, err := o.sendRaw(cmd)
	if err != nil {
		return "", err
	}
	if failed {
		return "", o.rejected(cmd, out)
	}
	return out, nil
}

// Cli implements Driver: outputs without IOS XR's timestamp line; a command
// the device rejects fails the call with ErrCommand.
func (d *iosxrDriver) Cli(ctx context.Context, commands []string) (map[string]string, error) {
	if d.xml {
		return d.xmlCli(ctx, commands)
	}
	out := make(map[string]string, len(commands))
	err := d.s.run(ctx, func(o *op) error {
		for _, c := range commands {
			text, err := xrShow(o, c)
			if err != nil {
				return err
			}
			out[c] = strings.TrimSpace(text)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *iosxrDriver) stage(ctx context.Context, config string, replace bool) error {
	if len(config) > maxOutput {
		return fmt.Errorf("%w: iosxr: candidate larger than %d bytes", ErrInvalidArgument, maxOutput)
	}
	return d.s.run(ctx, func(o *op) error {
		prev, prevReplace, prevLoaded := d.candidate, d.replace, d.loaded
		if !replace && d.loaded && !d.replace {
			d.candidate = strings.TrimRight(d.candidate, "\n") + "\n" + config
		} else {
			d.candidate = config
		}
		d.replace, d.loaded = replace, true
		if err := d.session(o, true, nil); err != nil {
			d.candidate, d.replace, d.loaded = prev, prevReplace, prevLoaded
			return err
		}
		return nil
	})
}

// LoadMergeCandidate implements Driver.
func (d *iosxrDriver) LoadMergeCandidate(ctx context.Context, config string) error {
	return d.stage(ctx, config, false)
}

// LoadReplaceCandidate implements Driver (committed with "commit replace").
func (d *iosxrDriver) LoadReplaceCandidate(ctx context.Context, config string) error {
	return d.stage(ctx, config, true)
}

// candidateText returns the device's rendering of the staged candidate as
// it would become the running configuration. The session must be open with
// the candidate loaded.
func (d *iosxrDriver) candidateText(o *op) (string, error) {
	cmd := "show configuration merge"
	if d.replace {
		cmd = "show configuration"
	}
	return configShow(o, cmd)
}

// CompareConfig implements Driver ("" when nothing is staged or the
// candidate changes nothing).
func (d *iosxrDriver) CompareConfig(ctx context.Context) (string, error) {
	var diff string
	err := d.s.run(ctx, func(o *op) error {
		if !d.loaded {
			return nil
		}
		return d.session(o, true, func() error {
			cand, err := d.candidateText(o)
			if err != nil {
				return err
			}
			run, err := configShow(o, "show running-config")
			if err != nil {
				return err
			}
			diff, err = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A: difflib.SplitLines(xrConfigBody(run) + "\n"), B: difflib.SplitLines(xrConfigBody(cand) + "\n"),
				FromFile: "running-config", ToFile: "candidate-config", Context: 3,
			})
			return err
		})
	})
	return strings.TrimSpace(diff), err
}

// xrFailedReport condenses "show configuration failed": each refused line
// with the error IOS XR gives for it.
func xrFailedReport(out string) string {
	var msgs []string
	last := ""
	for l := range strings.SplitSeq(xrClean(out), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "!!%"):
			msgs = append(msgs, fmt.Sprintf("%q: %s", last, strings.TrimSpace(strings.TrimPrefix(t, "!!"))))
		case t != "" && !strings.HasPrefix(t, "!") && t != "end":
			last = t
		}
	}
	return strings.Join(msgs, "; ")
}

// CommitConfig implements Driver: message becomes the commit comment,
// revertIn > 0 makes it "commit confirmed revertIn" (ConfirmCommit keeps
// it).
func (d *iosxrDriver) CommitConfig(ctx context.Context, message string, revertIn int) error {
	if err := checkCommitArgs(d.s, d.Capabilities(), message, revertIn); err != nil {
		return err
	}
	if strings.ContainsAny(message, "\r\n") {
		return fmt.Errorf("%w: iosxr: commit message with a line break", ErrInvalidArgument)
	}
	if revertIn > 65535 {
		return fmt.Errorf("%w: iosxr: revert_in %d (at most 65535 seconds)", ErrInvalidArgument, revertIn)
	}
	return d.s.run(ctx, func(o *op) error {
		if !d.loaded {
			return o.s.errf(ErrCommand, "commit_config", errors.New("no candidate configuration loaded"))
		}
		cmd := "commit"
		if d.replace {
			cmd += " replace"
		}
		if revertIn > 0 {
			cmd += fmt.Sprintf(" confirmed %d", revertIn)
		}
		if m := strings.TrimSpace(message); m != "" {
			cmd += " comment " + m
		}
		err := d.session(o, true, func() error {
			out, err := xrInput(o, cmd, "yes")
			if err != nil {
				return err
			}
			if strings.Contains(out, "% Failed to commit one or more") {
				rep, _, err := o.sendRaw("show configuration failed")
				if err != nil {
					return err
				}
				msg := xrFailedReport(rep)
				if msg == "" {
					msg = deviceMessage(out)
				}
				return o.s.errf(ErrCommand, cmd, errors.New(msg))
			}
			if containsAny(out, o.d.FailedWhenContains) ||
				(strings.Contains(out, "% ") && !strings.Contains(out, "No configuration changes to commit")) {
				return o.rejected(cmd, out)
			}
			return nil
		})
		if err != nil {
			return err
		}
		d.candidate, d.loaded, d.replace = "", false, false
		return nil
	})
}

var xrTrialRe = regexp.MustCompile(`(?m)^\s*Trial:\s+pending`)

func (d *iosxrDriver) pending(o *op) (bool, error) {
	out, err := xrShow(o, "show configuration commit list detail")
	if err != nil {
		return false, err
	}
	return xrTrialRe.MatchString(out), nil
}

// HasPendingCommit implements Driver.
func (d *iosxrDriver) HasPendingCommit(ctx context.Context) (bool, error) {
	var p bool
	err := d.s.run(ctx, func(o *op) error {
		var err error
		p, err = d.pending(o)
		return err
	})
	return p, err
}

// ConfirmCommit implements Driver: a plain "commit" from an empty
// configuration session.
func (d *iosxrDriver) ConfirmCommit(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error {
		p, err := d.pending(o)
		if err != nil {
			return err
		}
		if !p {
			return o.s.errf(ErrCommand, "confirm_commit", errors.New("no commit confirmed is pending"))
		}
		return d.session(o, false, func() error {
			out, err := xrInput(o, "commit", "cancel")
			if err != nil {
				return err
			}
			if strings.Contains(out, "% ") && !strings.Contains(out, "No configuration changes to commit") {
				return o.rejected("commit", out)
			}
			return nil
		})
	})
}

// DiscardConfig implements Driver: the staged candidate is dropped (it
// never stays on the device).
func (d *iosxrDriver) DiscardConfig(ctx context.Context) error {
	return d.s.run(ctx, func(*op) error {
		d.candidate, d.loaded, d.replace = "", false, false
		return nil
	})
}

// Rollback implements Driver (rollback configuration last 1).
func (d *iosxrDriver) Rollback(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error {
		const cmd = "rollback configuration last 1"
		out, err := xrShow(o, cmd)
		if err != nil {
			return err
		}
		if strings.Contains(out, "% ") || !strings.Contains(out, "successfully rolled back") {
			return o.rejected(cmd, out)
		}
		return nil
	})
}

// GetConfig implements Driver: running from show running-config, the
// candidate as the device would apply it (show configuration merge, or
// show configuration for a replace), no startup configuration.
func (d *iosxrDriver) GetConfig(ctx context.Context, retrieve string) (Config, error) {
	if d.xml {
		return d.xmlConfig(ctx, retrieve, false)
	}
	return d.cliConfig(ctx, retrieve)
}

// cliConfig is GetConfig over the CLI.
func (d *iosxrDriver) cliConfig(ctx context.Context, retrieve string) (Config, error) {
	var c Config
	if err := checkRetrieve(retrieve); err != nil {
		return c, err
	}
	err := d.s.run(ctx, func(o *op) error {
		if retrieve == "running" || retrieve == "all" {
			out, err := o.show("show running-config")
			if err != nil {
				return err
			}
			c.Running = xrConfigText(out)
		}
		if (retrieve == "candidate" || retrieve == "all") && d.loaded {
			return d.session(o, true, func() error {
				out, err := d.candidateText(o)
				c.Candidate = xrConfigText(out)
				return err
			})
		}
		return nil
	})
	return c, err
}

// Ping implements Driver: "ping [vrf V] DEST count N size S timeout T
// [source SRC]", read like IOS's output.
func (d *iosxrDriver) Ping(ctx context.Context, p PingOptions) (PingResult, error) {
	pingDefaults(&p)
	if err := checkProbeArgs(d.s, "ping", p.Destination, p.Source, p.VRF); err != nil {
		return PingResult{}, err
	}
	cmd := vrfCommand("ping", p.VRF, p.Destination)
	cmd += fmt.Sprintf(" count %d size %d timeout %d", p.Count, p.Size, p.Timeout)
	if p.Source != "" {
		cmd += " source " + p.Source
	}
	var res PingResult
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send(cmd)
		if err != nil {
			return err
		}
		res = parseIOSPing(xrClean(out), p.Destination)
		return nil
	})
	return res, err
}

// Traceroute implements Driver: "traceroute [vrf V] DEST [source SRC]
// timeout T" (the TTL is left to the device).
func (d *iosxrDriver) Traceroute(ctx context.Context, t TracerouteOptions) (TracerouteResult, error) {
	traceDefaults(&t)
	if d.xml {
		return d.xmlTraceroute(ctx, t)
	}
	if err := checkProbeArgs(d.s, "traceroute", t.Destination, t.Source, t.VRF); err != nil {
		return TracerouteResult{}, err
	}
	cmd := vrfCommand("traceroute", t.VRF, t.Destination)
	if t.Source != "" {
		cmd += " source " + t.Source
	}
	if t.Timeout >= 1 && t.Timeout <= 3600 {
		cmd += fmt.Sprintf(" timeout %d", t.Timeout)
	}
	var res TracerouteResult
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		if failed {
			res.Error = deviceMessage(out)
			return nil
		}
		res.Success = parseTraceroute(xrClean(out), "", "", 0)
		return nil
	})
	return res, err
}
