package driver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// base carries what every platform driver does the same way.
type base struct {
	s *session
}

// Platform implements Driver.
func (b *base) Platform() string { return b.s.name }

// Open implements Driver.
func (b *base) Open(ctx context.Context) error { return b.s.open(ctx) }

// Close implements Driver.
func (b *base) Close(ctx context.Context) error { return b.s.close(ctx) }

// IsAlive implements Driver with one prompt round trip.
func (b *base) IsAlive(ctx context.Context) bool {
	err := b.s.run(ctx, func(o *op) error {
		if err := o.budget("is_alive"); err != nil {
			return err
		}
		if _, err := o.d.Channel.GetPrompt(); err != nil {
			return o.fail("is_alive", err)
		}
		return nil
	})
	return err == nil
}

// noConfirmedCommit is embedded by drivers without commit confirmed.
type noConfirmedCommit struct{ name string }

// HasPendingCommit implements Driver: never a pending commit.
func (n noConfirmedCommit) HasPendingCommit(context.Context) (bool, error) { return false, nil }

// ConfirmCommit implements Driver with ErrNotSupported.
func (n noConfirmedCommit) ConfirmCommit(context.Context) error {
	return fmt.Errorf("%w: confirm_commit: the %s driver has no commit confirmed", ErrNotSupported, n.name)
}

// checkRetrieve validates get_config's retrieve argument.
func checkRetrieve(r string) error {
	switch r {
	case "all", "running", "candidate", "startup":
		return nil
	}
	return fmt.Errorf("%w: wrong retrieve filter %q (want all, running, candidate or startup)", ErrInvalidArgument, r)
}

// checkCommitArgs rejects the commit options a driver does not support,
// with NAPALM's messages.
func checkCommitArgs(s *session, c Capabilities, message string, revertIn int) error {
	if message != "" && !c.CommitMessage {
		return s.errf(ErrNotSupported, "commit_config", fmt.Errorf("commit message not implemented for this platform"))
	}
	if revertIn < 0 {
		return fmt.Errorf("%w: revert_in %d", ErrInvalidArgument, revertIn)
	}
	if revertIn > 0 && !c.HasConfirmedCommit {
		return s.errf(ErrNotSupported, "commit_config", fmt.Errorf("commit confirmed (revert_in) is not supported by the %s driver", s.name))
	}
	return nil
}

func pingDefaults(p *PingOptions) {
	if p.TTL == 0 {
		p.TTL = 255
	}
	if p.Timeout == 0 {
		p.Timeout = 2
	}
	if p.Size == 0 {
		p.Size = 100
	}
	if p.Count == 0 {
		p.Count = 5
	}
}

func traceDefaults(t *TracerouteOptions) {
	if t.TTL == 0 {
		t.TTL = 255
	}
	if t.Timeout == 0 {
		t.Timeout = 2
	}
}

// safeArg rejects arguments that would smuggle extra words or lines into a
// device command.
// vrfCommand is "VERB [vrf VRF] DEST", the start of the ping and
// traceroute commands of IOS and IOS XR.
func vrfCommand(verb, vrf, dest string) string {
	if vrf != "" {
		return verb + " vrf " + vrf + " " + dest
	}
	return verb + " " + dest
}

func safeArg(s *session, what, v string) error {
	if strings.ContainsAny(v, " \t\r\n|;") {
		return fmt.Errorf("%w: %s %s: %s %q", ErrInvalidArgument, s.name, s.addr, what, v)
	}
	return nil
}

var (
	traceHopRe = regexp.MustCompile(`^\s*(\d{1,3})\s+(.*)$`)
	rttUnitRe  = regexp.MustCompile(`(\d)\s*(?:msec|ms)\b`)
)

// parseTraceroute reads traceroute output lines "N host (ip) 1.2 ms * ..."
// (Linux "ms", IOS "msec"). A "*" probe gets nullName/nullIP and nullRTT.
func parseTraceroute(out string, nullName, nullIP string, nullRTT float64) map[int]TracerouteHop {
	res := map[int]TracerouteHop{}
	for line := range strings.SplitSeq(out, "\n") {
		m := traceHopRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		hop, _ := strconv.Atoi(m[1])
		toks := strings.Fields(rttUnitRe.ReplaceAllString(m[2], "${1}ms "))
		if len(toks) == 0 {
			continue
		}
		probes := map[int]TracerouteProbe{}
		n := 1
		host, ip := "", ""
		valid := false
		for i := 0; i < len(toks) && n <= 16; i++ {
			t := toks[i]
			switch {
			case t == "*":
				probes[n] = TracerouteProbe{RTT: nullRTT, IPAddress: nullIP, HostName: nullName}
				n++
				valid = true
			case strings.HasSuffix(t, "ms") && isFloat(strings.TrimSuffix(t, "ms")):
				rtt, _ := strconv.ParseFloat(strings.TrimSuffix(t, "ms"), 64)
				probes[n] = TracerouteProbe{RTT: rtt, IPAddress: ip, HostName: host}
				n++
				valid = true
			case strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")"):
				ip = strings.Trim(t, "()")
			case strings.HasPrefix(t, "[AS") || strings.HasPrefix(t, "AS") || strings.HasSuffix(t, "]"):
			default:
				host, ip = t, t
			}
		}
		if valid {
			res[hop] = TracerouteHop{Probes: probes}
		}
	}
	return res
}

func isFloat(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// lldpFromDetail derives NAPALM get_lldp_neighbors from the details: the
// remote system name (the chassis id where the name is unknown, i.e.
// equal to unknown) and the remote port, passed through port when not
// nil.
func lldpFromDetail(det map[string][]LLDPNeighborDetail, unknown string, port func(string) string) map[string][]LLDPNeighbor {
	res := map[string][]LLDPNeighbor{}
	for local, list := range det {
		for _, e := range list {
			host := e.RemoteSystemName
			if host == unknown {
				host = e.RemoteChassisID
			}
			p := e.RemotePort
			if port != nil {
				p = port(p)
			}
			res[local] = append(res[local], LLDPNeighbor{Hostname: host, Port: p})
		}
	}
	return res
}

// checkProbeArgs validates the arguments of a ping or traceroute (op): no
// argument may smuggle a second command, and the destination is required.
func checkProbeArgs(s *session, op, dest, src, vrf string) error {
	for _, a := range [][2]string{{"destination", dest}, {"source", src}, {"vrf", vrf}} {
		if err := safeArg(s, a[0], a[1]); err != nil {
			return err
		}
	}
	if dest == "" {
		return fmt.Errorf("%w: %s: empty destination", ErrInvalidArgument, op)
	}
	return nil
}
