package driver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// nxosDriver is the Cisco NX-OS driver over SSH (NAPALM's "nxos_ssh"), on scrapligo's
// cisco_nxos platform. It is also registered as "nxos": NAPALM's "nxos" driver talks NX-API
// (HTTPS), which gsalt does not implement, so "nxos" is an alias of the SSH driver here and
// optional_args meant for NX-API (transport http/https, ssl_verify) are not used.
//
// As in NAPALM: a merge candidate is kept in the driver (loads accumulate), compared offline
// with the running configuration (the lines of the candidate the running configuration lacks,
// with their parent lines, like netutils' diff_network_config) and committed by typing its
// lines in configuration mode; a replace candidate is copied to bootflash:candidate_config.txt
// over SCP, compared with "show diff rollback-patch file bootflash:sot_file file
// bootflash:candidate_config.txt" and committed with "rollback running-config file ..."; every
// commit first saves a checkpoint to bootflash:rollback_config.txt (Rollback restores it) and
// ends with "copy running-config startup-config".
type nxosDriver struct {
	base
	noConfirmedCommit
	fs           string // destination file system, "bootflash:"
	candidateCfg string
	rollbackCfg  string
	sotFile      string
	scpPort      int
	merge        strings.Builder // accumulated merge candidate
	replace      bool            // the staged candidate is a replace (else a merge)
	loaded       bool            // a candidate is staged
}

// NewNXOS returns an unopened Cisco NX-OS (SSH) driver. Recognised optional_args besides the
// common ones: dest_file_system (default "bootflash:"), candidate_cfg
// ("candidate_config.txt"), rollback_cfg ("rollback_config.txt") and scp_port (the SSH port;
// 22 with the telnet transport).
func NewNXOS(o Options) (Driver, error) {
	s, err := newSession("nxos_ssh", "cisco_nxos", o)
	if err != nil {
		return nil, err
	}
	d := &nxosDriver{
		base:              base{s: s},
		noConfirmedCommit: noConfirmedCommit{"nxos_ssh"},
		fs:                optString(o.OptionalArgs, "dest_file_system", "bootflash:"),
		candidateCfg:      optString(o.OptionalArgs, "candidate_cfg", "candidate_config.txt"),
		rollbackCfg:       optString(o.OptionalArgs, "rollback_cfg", "rollback_config.txt"),
		sotFile:           "sot_file",
		scpPort:           s.o.Port,
	}
	if s.tport == "telnet" {
		d.scpPort = DefaultPort
	}
	d.scpPort = optInt(o.OptionalArgs, "scp_port", d.scpPort)
	if d.scpPort < 1 || d.scpPort > 65535 {
		return nil, fmt.Errorf("%w: nxos_ssh: scp_port %d", ErrInvalidArgument, d.scpPort)
	}
	if !strings.HasSuffix(d.fs, ":") || strings.ContainsAny(d.fs, " \t\r\n") {
		return nil, fmt.Errorf("%w: nxos_ssh: dest_file_system %q must end with ':'", ErrInvalidArgument, d.fs)
	}
	for _, n := range []string{d.candidateCfg, d.rollbackCfg} {
		if n == "" || strings.ContainsAny(n, " \t\r\n\"'/\\:;|") {
			return nil, fmt.Errorf("%w: nxos_ssh: file name %q", ErrInvalidArgument, n)
		}
	}
	return d, nil
}

// Capabilities implements Driver: no candidate retrieval, commit message or commit confirmed.
func (d *nxosDriver) Capabilities() Capabilities { return Capabilities{} }

func (d *nxosDriver) path(name string) string { return d.fs + name }

// Cli implements Driver: outputs are returned as the device prints them, error messages
// included (NAPALM nxos_ssh does not raise on invalid commands).
func (d *nxosDriver) Cli(ctx context.Context, commands []string) (map[string]string, error) {
	out := make(map[string]string, len(commands))
	err := d.s.run(ctx, func(o *op) error {
		for _, c := range commands {
			text, _, err := o.send(c)
			if err != nil {
				return err
			}
			out[c] = text
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// dontAsk runs commands between "terminal dont-ask" and "no terminal dont-ask" and returns
// their outputs, stopping at the first one scrapligo reports as failed.
func (d *nxosDriver) dontAsk(o *op, cmds ...string) ([]string, error) {
	if _, err := o.show("terminal dont-ask"); err != nil {
		return nil, err
	}
	outs := make([]string, 0, len(cmds))
	var bad error
	for _, c := range cmds {
		out, failed, err := o.send(c)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
		if failed {
			bad = o.rejected(c, out)
			break
		}
	}
	if _, err := o.show("no terminal dont-ask"); err != nil {
		return nil, err
	}
	return outs, bad
}

// LoadMergeCandidate implements Driver: the lines are kept in the driver and appended to
// earlier merge loads (NAPALM's merge_candidate), nothing is sent to the device.
func (d *nxosDriver) LoadMergeCandidate(ctx context.Context, config string) error {
	if strings.TrimSpace(config) == "" {
		return fmt.Errorf("%w: nxos_ssh: empty merge candidate", ErrInvalidArgument)
	}
	return d.s.run(ctx, func(o *op) error {
		if d.merge.Len()+len(config)+1 > maxOutput {
			return fmt.Errorf("%w: nxos_ssh: merge candidate larger than %d bytes", ErrInvalidArgument, maxOutput)
		}
		if d.replace {
			d.merge.Reset()
		}
		d.merge.WriteString("\n")
		d.merge.WriteString(config)
		d.replace, d.loaded = false, true
		return nil
	})
}

// LoadReplaceCandidate implements Driver: the configuration is copied to
// bootflash:candidate_config.txt over SCP and verified with the device's md5sum.
func (d *nxosDriver) LoadReplaceCandidate(ctx context.Context, config string) error {
	if strings.TrimSpace(config) == "" {
		return fmt.Errorf("%w: nxos_ssh: empty replace candidate", ErrInvalidArgument)
	}
	if len(config) > maxOutput {
		return fmt.Errorf("%w: nxos_ssh: replace candidate larger than %d bytes", ErrInvalidArgument, maxOutput)
	}
	return d.s.run(ctx, func(o *op) error {
		target := d.path(d.candidateCfg)
		if err := d.scpPut(o, target, []byte(config)); err != nil {
			return err
		}
		cmd := "show file " + target + " md5sum"
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(out); failed || got != md5Hex([]byte(config)) {
			return o.s.errf(ErrCommand, cmd, fmt.Errorf("file transfer not verified (md5 %q): %s", got, deviceMessage(out)))
		}
		d.merge.Reset()
		d.replace, d.loaded = true, true
		return nil
	})
}

// nxosConfigFilter matches the header lines NAPALM removes from configurations.
var nxosConfigFilter = regexp.MustCompile(`(?m)(!Command: show .*$|!Time:.*\d{4}\s*$|Startup config saved at:.*$)`)

// CompareConfig implements Driver ("" when nothing is staged).
func (d *nxosDriver) CompareConfig(ctx context.Context) (string, error) {
	var diff string
	err := d.s.run(ctx, func(o *op) error {
		if !d.loaded {
			return nil
		}
		if !d.replace {
			run, err := o.show("show running-config all")
			if err != nil {
				return err
			}
			diff = missingConfigLines(d.merge.String(), nxosConfigFilter.ReplaceAllString(run, ""))
			return nil
		}
		sot := d.path(d.sotFile)
		if _, err := d.dontAsk(o, "delete "+sot+" no-prompt"); err != nil && !strings.Contains(err.Error(), "No such file") {
			return err
		}
		if _, err := d.dontAsk(o, "checkpoint file "+sot); err != nil {
			return err
		}
		cmd := "show diff rollback-patch file " + sot + " file " + d.path(d.candidateCfg)
		out, _, err := o.send(cmd)
		if err != nil {
			return err
		}
		_, patch, ok := strings.Cut(out, "Generating Rollback Patch")
		if !ok {
			return o.s.errf(ErrCommand, cmd, fmt.Errorf("could not calculate the diff: %s", deviceMessage(out)))
		}
		patch = strings.TrimSpace(strings.ReplaceAll(patch, "Rollback Patch is Empty", ""))
		var keep []string
		for l := range strings.SplitSeq(patch, "\n") {
			l = strings.TrimRight(l, " \r")
			if l != "" && l[0] != '!' && l[0] != '.' {
				keep = append(keep, l)
			}
		}
		diff = strings.Join(keep, "\n")
		return nil
	})
	return diff, err
}

// CommitConfig implements Driver.
func (d *nxosDriver) CommitConfig(ctx context.Context, message string, revertIn int) error {
	if err := checkCommitArgs(d.s, d.Capabilities(), message, revertIn); err != nil {
		return err
	}
	return d.s.run(ctx, func(o *op) error {
		if !d.loaded {
			return o.s.errf(ErrCommand, "commit_config", errors.New("no candidate configuration loaded"))
		}
		outs, err := d.dontAsk(o, "checkpoint file "+d.path(d.rollbackCfg))
		if err != nil {
			return err
		}
		if strings.Contains(outs[0], "No space") || strings.Contains(outs[0], "ERROR") {
			return o.rejected("checkpoint file "+d.path(d.rollbackCfg), outs[0])
		}
		if d.replace {
			cmd := "rollback running-config file " + d.path(d.candidateCfg)
			outs, err := d.dontAsk(o, cmd)
			if err != nil {
				return err
			}
			if strings.Contains(outs[0], "Rollback failed.") || !strings.Contains(strings.ToLower(outs[0]), "completed") {
				return o.s.errf(ErrCommand, cmd, fmt.Errorf("candidate config could not be applied: %s", deviceMessage(outs[0])))
			}
		} else if err := d.commitMerge(o); err != nil {
			return err
		}
		if err := d.save(o); err != nil {
			return err
		}
		d.merge.Reset()
		d.loaded = false
		return nil
	})
}

// commitMerge types the merge candidate in configuration mode; on a rejected line it rolls
// back to the checkpoint taken before.
func (d *nxosDriver) commitMerge(o *op) error {
	if err := o.budget("configure terminal"); err != nil {
		return err
	}
	if err := o.d.AcquirePriv("configuration"); err != nil {
		return o.fail("configure terminal", err)
	}
	var bad error
	for _, l := range configLines(d.merge.String()) {
		if t := strings.TrimSpace(l); t == "" || t == "end" {
			continue
		}
		out, failed, err := o.sendRaw(l)
		if err != nil {
			return err
		}
		if failed || strings.Contains(out, "Invalid command") {
			bad = fmt.Errorf("%q: %s", strings.TrimSpace(l), deviceMessage(out))
			break
		}
	}
	if err := o.home("configuration"); err != nil {
		return err
	}
	if bad == nil {
		return nil
	}
	rbErr := d.rollback(o)
	return o.s.errf(ErrCommand, "commit_config", errors.Join(
		fmt.Errorf("configuration merge failed; automatic rollback attempted: %w", bad), rbErr))
}

// save is "copy running-config startup-config" (netmiko's save_config for NX-OS).
func (d *nxosDriver) save(o *op) error {
	out, failed, err := o.send("copy running-config startup-config")
	if err != nil {
		return err
	}
	if failed || !strings.Contains(strings.ToLower(out), "complete") {
		return o.s.errf(ErrCommand, "copy running-config startup-config",
			fmt.Errorf("unable to save running-config to startup-config: %s", deviceMessage(out)))
	}
	return nil
}

// DiscardConfig implements Driver: the merge buffer is dropped and a replace candidate file
// deleted, as NAPALM does.
func (d *nxosDriver) DiscardConfig(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error {
		if d.loaded && d.replace {
			if _, err := d.dontAsk(o, "delete "+d.path(d.candidateCfg)+" no-prompt"); err != nil &&
				!strings.Contains(err.Error(), "No such file") {
				return err
			}
		}
		d.merge.Reset()
		d.loaded, d.replace = false, false
		return nil
	})
}

func (d *nxosDriver) rollback(o *op) error {
	file := d.path(d.rollbackCfg)
	out, _, err := o.send("dir " + file)
	if err != nil {
		return err
	}
	if strings.Contains(out, "No such file or directory") {
		return o.s.errf(ErrCommand, "rollback", fmt.Errorf("rollback file %s does not exist on the device", file))
	}
	cmd := "rollback running-config file " + file
	outs, err := d.dontAsk(o, cmd)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(outs[0]), "completed") || strings.Contains(outs[0], "Rollback failed.") {
		return o.s.errf(ErrCommand, cmd, errors.New(deviceMessage(outs[0])))
	}
	return d.save(o)
}

// Rollback implements Driver: the checkpoint saved by the last CommitConfig is restored.
func (d *nxosDriver) Rollback(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error { return d.rollback(o) })
}

// GetConfig implements Driver; NX-OS has no candidate here (always "").
func (d *nxosDriver) GetConfig(ctx context.Context, retrieve string) (Config, error) {
	return d.GetConfigWith(ctx, ConfigOptions{Retrieve: retrieve})
}

// nxosConfig is NAPALM nxos_ssh's get_config.
var nxosConfig = &cliConfigSpec{
	running: "show running-config", startup: "show startup-config", full: " all",
	added: nxosConfigFilter, runningFirst: true, sanitize: CiscoSanitizeFilters,
}

// GetConfigWith implements ConfigGetter like NAPALM nxos_ssh.
func (d *nxosDriver) GetConfigWith(ctx context.Context, co ConfigOptions) (Config, error) {
	return getCLIConfig(ctx, d.s, nxosConfig, co)
}

// GetNTPStats implements Driver: NAPALM's nxos_ssh has no get_ntp_stats.
func (d *nxosDriver) GetNTPStats(context.Context) ([]NTPStats, error) {
	return nil, d.s.errf(ErrNotSupported, "get_ntp_stats", errors.New("not implemented by the nxos_ssh driver"))
}
