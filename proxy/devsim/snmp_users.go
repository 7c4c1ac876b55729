package devsim

import (
	"fmt"
	"strconv"
	"strings"
)

// SNMP and user accounts, from the running configuration: IOS "show snmp
// chassis", EOS "show snmp v2-mib chassis|location|contact" and "show users
// accounts" (text and JSON), in the devices' layouts.

// topLines returns the global lines of the running configuration that
// start with words. d.mu must not be held.
func (s *shell) topLines(words ...string) []string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	var out []string
	for _, st := range s.dev.state().running.items {
		if hasWords(st.line, words) {
			out = append(out, st.line)
		}
	}
	return out
}

// snmpSetting is the rest of the first "snmp-server KEY ..." line.
func (s *shell) snmpSetting(key string) string {
	for _, l := range s.topLines("snmp-server", key) {
		return strings.TrimSpace(strings.Join(strings.Fields(l)[2:], " "))
	}
	return ""
}

// iosShowSNMPChassis prints the chassis id (the configured one, else the
// serial number, as IOS does).
func iosShowSNMPChassis(s *shell, _ []string) string {
	if c := s.snmpSetting("chassis-id"); c != "" {
		return c + "\n"
	}
	return s.dev.fleet.serialOf(s.dev.index) + "\n"
}

func eosSNMPv2MIB(s *shell, args []string) (key, val string, ok bool) {
	if len(args) != 1 {
		return "", "", false
	}
	switch args[0] {
	case "chassis":
		return "chassisId", s.snmpSetting("chassis-id"), true
	case "location", "contact":
		return args[0], s.snmpSetting(args[0]), true
	}
	return "", "", false
}

func eosShowSNMPv2MIB(s *shell, args []string) string {
	k, v, ok := eosSNMPv2MIB(s, args)
	if !ok {
		return "% Invalid input\n"
	}
	if k == "chassisId" {
		k = "Chassis"
	}
	return fmt.Sprintf("%s: %s\n", strings.ToUpper(k[:1])+k[1:], v)
}

func eosSNMPv2MIBJSON(s *shell, args []string) string {
	k, v, ok := eosSNMPv2MIB(s, args)
	if !ok {
		return "% Invalid input\n"
	}
	return toJSON(map[string]any{k: v})
}

// eosUser is one "username NAME [privilege N] [role R] secret sha512 HASH"
// line, with its "username NAME ssh-key KEY" line.
type eosUser struct {
	name, role, secret, sshKey string
	priv                       int
}

func (s *shell) eosUsers() []eosUser {
	var out []eosUser
	idx := map[string]int{}
	for _, l := range s.topLines("username") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		i, ok := idx[f[1]]
		if !ok {
			i = len(out)
			idx[f[1]] = i
			out = append(out, eosUser{name: f[1], priv: 1})
		}
		u := &out[i]
		for j := 2; j < len(f); j++ {
			switch f[j] {
			case "privilege":
				if j+1 < len(f) {
					u.priv, _ = strconv.Atoi(f[j+1])
					j++
				}
			case "role":
				if j+1 < len(f) {
					u.role = f[j+1]
					j++
				}
			case "secret":
				if j+2 < len(f) {
					u.secret = f[j+2]
					j += 2
				} else if j+1 < len(f) {
					u.secret = f[j+1]
					j++
				}
			case "ssh-key":
				u.sshKey = strings.Join(f[j+1:], " ")
				j = len(f)
			case "nopassword":
			}
		}
	}
	return out
}

func eosShowUsersAccounts(s *shell, _ []string) string {
	var b strings.Builder
	for _, u := range s.eosUsers() {
		fmt.Fprintf(&b, "user: %s\n       role: %s\n       privilege level: %d\n       ssh public key: %s\n\n",
			u.name, u.role, u.priv, u.sshKey)
	}
	return b.String()
}

func eosUsersAccountsJSON(s *shell, _ []string) string {
	users := map[string]any{}
	for _, u := range s.eosUsers() {
		users[u.name] = map[string]any{"username": u.name, "role": u.role, "privLevel": u.priv,
			"secret": u.secret, "sshAuthorizedKey": u.sshKey}
	}
	return toJSON(map[string]any{"users": users})
}

// eosTransceivers are the simulated optics of an EOS switch: the routed
// ports carry 10GBASE-SR modules (readings in the layout of a real 7050's
// "show interfaces transceiver | json").
func eosTransceiversJSON(s *shell, _ []string) string {
	ifs := map[string]any{}
	for i, port := range []string{"Ethernet2", "Ethernet3"} {
		ifs[port] = map[string]any{"mediaType": "10GBASE-SR", "rxPower": -2.1 - float64(i)/10, "txPower": -1.5,
			"txBias": 6.25, "temperature": 31.5, "voltage": 3.29, "vendorSn": fmt.Sprintf("XSIM%05d%d", s.dev.index, i),
			"updateTime": float64(s.dev.fleet.opts.Now().Unix())}
	}
	return toJSON(map[string]any{"interfaces": ifs})
}

func eosShowTransceivers(s *shell, _ []string) string {
	return "If device is externally calibrated, only calibrated values are printed.\n" +
		"N/A: not applicable, Tx: transmit, Rx: receive.\nmA: milliamperes, dBm: decibels (milliwatts).\n" +
		"                               Bias      Optical   Optical\n" +
		"           Temp       Voltage  Current   Tx Power  Rx Power\n" +
		"Port       (Celsius)  (Volts)  (mA)      (dBm)     (dBm)     Last Update\n" +
		"---------  ---------  -------  --------  --------  --------  -------------------\n" +
		"Et2        31.50      3.29     6.25      -1.50     -2.10     0:00:03 ago\n" +
		"Et3        31.50      3.29     6.25      -1.50     -2.20     0:00:03 ago\n"
}
