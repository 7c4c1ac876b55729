package devsim

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The IOS XR XML agent ("xml agent tty"): "xml" at the exec prompt enters
// it, its prompt is "XML> ", each input line is one request document
// (<?xml ...?><Request MajorVersion="1" MinorVersion="0">BODY</Request>)
// answered by a <Response> document; "exit" leaves. The agent answers the
// requests of NAPALM's iosxr driver (pyIOSXR) from the device's state:
// facts, interfaces and their counters and addresses, ARP, LLDP, NTP,
// BGP (operational and configuration), SNMP, AAA users, environment, the
// L2VPN MAC tables (empty: a router), IP SLA (none configured) and CLI
// requests (<CLI><Exec>/<Configuration>). Anything else gets the agent's
// error reply.

// xmlEsc escapes text for an XML element.
func xmlEsc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// xrXMLReply wraps a response body.
func xrXMLReply(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Response MajorVersion="1" MinorVersion="0">` + body +
		`<ResultSummary ErrorCount="0"/></Response>`
}

// xrXMLError is the agent's reply to a request it cannot serve.
func xrXMLError(msg string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Response MajorVersion="1" MinorVersion="0" ErrorCode="0x43680000" ErrorMsg="` +
		xmlEsc(msg) + `"><ResultSummary ErrorCount="1"/></Response>`
}

// xrXMLSpaceRe matches the white space between two tags (pyIOSXR's
// requests carry line-continuation spaces).
var xrXMLSpaceRe = regexp.MustCompile(`>\s+<`)

// xrXMLEnter is the "xml" exec command.
func xrXMLEnter(s *shell, _ []string) string {
	s.mode = modeXML
	return ""
}

// xrXMLLine serves one line typed in XML mode.
func (s *shell) xrXMLLine(line string) string {
	line = strings.TrimSpace(line)
	if line == "exit" {
		s.mode = modeEnable
		return ""
	}
	_, rest, ok := strings.Cut(line, "<Request")
	if !ok {
		return "ERROR: 0x4368a800 'XML-TTY' detected the 'warning' condition 'The XML document is not well formed'"
	}
	_, body, _ := strings.Cut(rest, ">")
	body, _, _ = strings.Cut(body, "</Request>")
	return s.xrXMLRequest(strings.TrimSpace(xrXMLSpaceRe.ReplaceAllString(body, "><")))
}

// xrCLIReply runs a CLI request's command without the timestamp line.
func (s *shell) xrCLIReply(kind, cmd string) string {
	xr := s.xrs()
	was := xr.noStamp
	xr.noStamp = true
	switch strings.Join(strings.Fields(cmd), " ") {
	case "show configuration merge":
		cmd = "show running-config" // the agent session holds no changes
	case "show running-config all":
		cmd = "show running-config" // the simulator keeps no defaults to add
	}
	out, _ := s.execLine(cmd)
	xr.noStamp = was
	return xrXMLReply("<CLI><" + kind + ">" + xmlEsc(out) + "</" + kind + "></CLI>")
}

// xrXMLRequest answers one request body (whitespace removed).
func (s *shell) xrXMLRequest(body string) string {
	has := func(parts ...string) bool {
		for _, p := range parts {
			if !strings.Contains(body, p) {
				return false
			}
		}
		return true
	}
	for _, kind := range []string{"Exec", "Configuration"} {
		if cmd, ok := strings.CutPrefix(body, "<CLI><"+kind+">"); ok {
			cmd, _, _ = strings.Cut(cmd, "</"+kind+">")
			cmd = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(cmd)
			return s.xrCLIReply(kind, cmd)
		}
	}
	switch {
	case has("<Operational><SystemTime/>"):
		if !has("<PlatformInventory>") {
			return xrXMLError("'XMLMDA' detected the 'warning' condition 'The requested operation is not supported'")
		}
		return xrXMLReply("<Get><Operational>" + s.xrXMLSystemTime() + s.xrXMLRackInfo() + "</Operational></Get>")
	case body == "<Get><Operational><Interfaces/></Operational></Get>":
		return xrXMLReply("<Get><Operational><Interfaces>" + s.xrXMLInterfaces(false) + "</Interfaces></Operational></Get>")
	case has("<Interfaces><InterfaceTable>"):
		return xrXMLReply("<Get><Operational><Interfaces>" + s.xrXMLInterfaces(true) + "</Interfaces></Operational></Get>")
	case has("<IPV4Network>", "<IPV6Network>"):
		return xrXMLReply("<Get><Operational>" + s.xrXMLIPv4() + "<IPV6Network><NodeTable/></IPV6Network></Operational></Get>")
	case has("<Operational><ARP>"):
		return xrXMLReply("<Get><Operational>" + s.xrXMLARP() + "</Operational></Get>")
	case has("<Operational><LLDP>"):
		return xrXMLReply("<Get><Operational>" + s.xrXMLLLDP() + "</Operational></Get>")
	case has("<Configuration><NTP>"):
		return xrXMLReply("<Get><Configuration>" + s.xrXMLNTPConfig() + "</Configuration></Get>")
	case has("<Operational><NTP>"):
		return xrXMLReply("<Get><Operational>" + s.xrXMLNTPStats() + "</Operational></Get>")
	case has("<ConfigInstanceTable>"):
		return xrXMLReply("<Get><Operational><BGP><ConfigInstanceTable><ConfigInstance><Naming><InstanceName>default</InstanceName></Naming>" +
			"<ConfigInstanceVRFTable/></ConfigInstance></ConfigInstanceTable></BGP></Operational></Get>")
	case has("<Operational><BGP><InstanceTable>"):
		return xrXMLReply("<Get><Operational>" + s.xrXMLBGP(has("<DefaultVRF>")) + "</Operational></Get>")
	case has("<Configuration><BGP>"):
		return s.xrXMLBGPConfig()
	case has("<Configuration><SNMP>"):
		return xrXMLReply("<Get><Configuration>" + s.xrXMLSNMP() + "</Configuration></Get>")
	case has("<Configuration><AAA>"):
		return xrXMLReply("<Get><Configuration>" + s.xrXMLAAA() + "</Configuration></Get>")
	case has("<AdminOperational><PlatformInventory>"):
		return xrXMLReply("<Get><AdminOperational>" + xrXMLSlots() + "</AdminOperational></Get>")
	case has("<EnvironmentalMonitoring>"):
		return xrXMLReply("<Get><AdminOperational>" + xrXMLEnvSlot(body) + "</AdminOperational></Get>")
	case has("<MemorySummary>"):
		return xrXMLReply("<Get><Operational><MemorySummary><NodeTable><Node><Naming><NodeName><Rack>0</Rack><Slot>RSP0</Slot>" +
			"<Instance>CPU0</Instance></NodeName></Naming><Summary><SystemRAMMemory>8589934592</SystemRAMMemory>" +
			"<FreeApplicationMemory>5368709120</FreeApplicationMemory></Summary></Node></NodeTable></MemorySummary></Operational></Get>")
	case has("<SystemMonitoring>"):
		return xrXMLReply("<Get><Operational><SystemMonitoring><CPUUtilization><Naming><NodeName><Rack>0</Rack><Slot>RP0</Slot>" +
			"<Instance>CPU0</Instance></NodeName></Naming><TotalCPUOneMinute>3</TotalCPUOneMinute><TotalCPUFiveMinute>3</TotalCPUFiveMinute>" +
			"</CPUUtilization></SystemMonitoring></Operational></Get>")
	case has("<Operational><RIB>") || has("<Operational><IPV6_RIB>"):
		return xrXMLReply("<Get><Operational><RIB><VRFTable><VRF><Naming><VRFName>default</VRFName></Naming><AFTable><AF><SAFTable><SAF>" +
			"<IP_RIBRouteTable><IP_RIBRoute><RouteTable>" + s.xrXMLRoute(body) +
			"</RouteTable></IP_RIBRoute></IP_RIBRouteTable></SAF></SAFTable></AF></AFTable></VRF></VRFTable></RIB></Operational></Get>")
	case has("<Set><Action><TraceRoute>"):
		return xrXMLReply("<Set><Action><TraceRoute>" + s.xrXMLTraceroute(body) + "</TraceRoute></Action></Set>")
	case has("<L2VPNForwarding>"):
		return xrXMLReply("<Get><Operational><L2VPNForwarding><NodeTable/></L2VPNForwarding></Operational></Get>")
	case has("<IPSLA>"):
		if has("<Configuration>") {
			return xrXMLReply("<Get><Configuration><IPSLA/></Configuration></Get>")
		}
		return xrXMLReply("<Get><Operational><IPSLA/></Operational></Get>")
	}
	return xrXMLError("'XMLMDA' detected the 'warning' condition 'The XML request does not contain a valid object'")
}

func (s *shell) xrXMLSystemTime() string {
	f := s.dev.fleet
	s.dev.mu.Lock()
	host := s.dev.hostname()
	s.dev.mu.Unlock()
	up := int64(f.opts.Now().Sub(f.bootTime(s.dev.index)) / time.Second)
	return fmt.Sprintf("<SystemTime><Uptime><Hostname>%s</Hostname><Uptime>%d</Uptime></Uptime></SystemTime>", xmlEsc(host), up)
}

func (s *shell) xrXMLRackInfo() string {
	return fmt.Sprintf("<PlatformInventory><RackTable><Rack><Naming><Name>0</Name></Naming><Attributes><BasicInfo>"+
		"<Name>Rack 0</Name><ModelName>%s</ModelName><SoftwareRevision>%s</SoftwareRevision><SerialNumber>%s</SerialNumber>"+
		"</BasicInfo></Attributes></Rack></RackTable></PlatformInventory>", xrPID, xrVersion, xrSerial(s.dev.index))
}

// xrXMLInterfaces is the interface table: attributes, or the counters.
func (s *shell) xrXMLInterfaces(counters bool) string {
	f := s.dev.fleet
	var b strings.Builder
	b.WriteString("<InterfaceTable>")
	for _, in := range s.xrIfaces() {
		admin, up := s.ifState(in.ifaceInfo)
		if counters {
			ip, ib, op, ob := s.liveCounters(in.name, admin && up)
			fmt.Fprintf(&b, "<Interface><Naming><InterfaceName>%[1]s</InterfaceName></Naming><InterfaceHandle>%[1]s</InterfaceHandle>"+
				"<InterfaceStatistics><StatsType>Full</StatsType><FullInterfaceStats><PacketsReceived>%d</PacketsReceived>"+
				"<BytesReceived>%d</BytesReceived><PacketsSent>%d</PacketsSent><BytesSent>%d</BytesSent>"+
				"<MulticastPacketsReceived>0</MulticastPacketsReceived><BroadcastPacketsReceived>0</BroadcastPacketsReceived>"+
				"<MulticastPacketsSent>0</MulticastPacketsSent><BroadcastPacketsSent>0</BroadcastPacketsSent>"+
				"<OutputDrops>0</OutputDrops><InputDrops>0</InputDrops><InputErrors>0</InputErrors><OutputErrors>0</OutputErrors>"+
				"</FullInterfaceStats></InterfaceStatistics></Interface>", xmlEsc(in.name), ip, ib, op, ob)
			continue
		}
		state, line := "IM_STATE_UP", "IM_STATE_UP"
		switch {
		case !admin:
			state, line = "IM_STATE_ADMINDOWN", "IM_STATE_ADMINDOWN"
		case !up:
			state, line = "IM_STATE_DOWN", "IM_STATE_DOWN"
		}
		mac := ""
		if in.hasBW {
			mac = colonMAC(f.macOf(s.dev.index, xrPort(in.name)))
		}
		bw := xrSpeed(in.name)
		if !in.hasBW {
			bw = 0
		}
		flap := "" // IOS XR gives the last change as epoch nanoseconds
		if admin && up {
			flap = fmt.Sprintf("<LastStateTransitionTime>%d</LastStateTransitionTime>", f.bootTime(s.dev.index).UnixNano())
		}
		fmt.Fprintf(&b, "<Interface><Naming><InterfaceName>%s</InterfaceName></Naming><State>%s</State><LineState>%s</LineState>"+
			"<MACAddress><Address>%s</Address></MACAddress><Bandwidth>%d</Bandwidth><MTU>%d</MTU><Description>%s</Description>%s</Interface>",
			xmlEsc(in.name), state, line, mac, bw, in.mtu, xmlEsc(in.description), flap)
	}
	b.WriteString("</InterfaceTable>")
	return b.String()
}

func (s *shell) xrXMLIPv4() string {
	var b strings.Builder
	b.WriteString("<IPV4Network><InterfaceTable>")
	for _, in := range s.xrIfaces() {
		if in.addr == "" {
			continue
		}
		fmt.Fprintf(&b, "<Interface><Naming><InterfaceName>%s</InterfaceName></Naming><VRFTable><VRF><Naming><VRFName>default</VRFName></Naming>"+
			"<Detail><PrimaryAddress>%s</PrimaryAddress><PrefixLength>%d</PrefixLength><SecondaryAddress>", xmlEsc(in.name), in.addr, in.plen)
		for _, sec := range in.secondaries {
			a, p, _ := strings.Cut(sec, "/")
			fmt.Fprintf(&b, "<Entry><Address>%s</Address><PrefixLength>%s</PrefixLength></Entry>", a, p)
		}
		b.WriteString("</SecondaryAddress></Detail></VRF></VRFTable></Interface>")
	}
	b.WriteString("</InterfaceTable></IPV4Network>")
	return b.String()
}

func (s *shell) xrXMLARP() string {
	var b strings.Builder
	b.WriteString("<ARP><NodeTable><Node><Naming><NodeName><Rack>0</Rack><Slot>RP0</Slot><Instance>CPU0</Instance></NodeName></Naming><EntryTable>")
	for _, e := range s.xrARPTable() {
		// the device's own addresses have no age
		state, age := "StateDynamic", fmt.Sprintf("<Age>%d</Age>", e.age)
		if e.own {
			state, age = "StateInterface", ""
		}
		fmt.Fprintf(&b, "<Entry><Naming><Address>%s</Address><InterfaceName>%s</InterfaceName></Naming><MediaType>MediaARPA</MediaType>"+
			"<State>%s</State>%s<HardwareLength>6</HardwareLength><HardwareAddress>%s</HardwareAddress></Entry>", e.ip, xmlEsc(e.iface), state, age, e.mac)
	}
	b.WriteString("</EntryTable></Node></NodeTable></ARP>")
	return b.String()
}

func (s *shell) xrXMLLLDP() string {
	s.dev.mu.Lock()
	tab := s.lldpTable()
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("<LLDP><NodeTable><Node><Naming><NodeName><Rack>0</Rack><Slot>RP0</Slot><Instance>CPU0</Instance></NodeName></Naming><Neighbors><DetailTable>")
	for _, e := range tab {
		fmt.Fprintf(&b, "<Detail><Naming><InterfaceName>%[1]s</InterfaceName><DeviceID>%[2]s</DeviceID></Naming><Entry>"+
			"<ReceivingInterfaceName>%[1]s</ReceivingInterfaceName><ReceivingParentInterfaceName>%[1]s</ReceivingParentInterfaceName>"+
			"<DeviceID>%[2]s</DeviceID><ChassisID>%[3]s</ChassisID><PortIDDetail>%[4]s</PortIDDetail><HeaderVersion>0</HeaderVersion>"+
			"<HoldTime>120</HoldTime><EnabledCapabilities>R</EnabledCapabilities><Detail><PortDescription>%[5]s</PortDescription>"+
			"<SystemName>%[2]s</SystemName><SystemDescription>%[6]s, %[7]s</SystemDescription><TimeRemaining>95</TimeRemaining>"+
			"<SystemCapabilities>R</SystemCapabilities><EnabledCapabilities>R</EnabledCapabilities></Detail></Entry></Detail>",
			xmlEsc(e.local), xmlEsc(e.system), xmlEsc(e.chassis), xmlEsc(e.remote), xmlEsc(e.remoteDescr), xrVersion, xrModel)
	}
	b.WriteString("</DetailTable></Neighbors></Node></NodeTable></LLDP>")
	return b.String()
}

func (s *shell) xrXMLNTPConfig() string {
	s.dev.mu.Lock()
	peers := s.xrNTPPeers()
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("<NTP><PeerVRFTable><PeerVRF><Naming><VRFName>default</VRFName></Naming><PeerIPV4Table>")
	for _, p := range peers {
		fmt.Fprintf(&b, "<PeerIPV4><Naming><AddressIPV4>%s</AddressIPV4></Naming><PeerTypeIPV4><Naming><PeerType>Server</PeerType></Naming>"+
			"</PeerTypeIPV4></PeerIPV4>", xmlEsc(p.addr))
	}
	b.WriteString("</PeerIPV4Table></PeerVRF></PeerVRFTable></NTP>")
	return b.String()
}

func (s *shell) xrXMLNTPStats() string {
	s.dev.mu.Lock()
	peers := s.xrNTPPeers()
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("<NTP><NodeTable><Node><Naming><Node>0/RP0/CPU0</Node></Naming><Associations><IsNTPEnabled>true</IsNTPEnabled><PeerSummaryInfo>")
	for _, p := range peers {
		if p.synced {
			fmt.Fprintf(&b, "<Entry><PeerInfoCommon><HostMode>ntp_mode_client</HostMode><IsConfigured>true</IsConfigured><Address>%s</Address>"+
				"<ReferenceID>.GPS.</ReferenceID><HostPoll>64</HostPoll><Reachability>377</Reachability><Stratum>1</Stratum>"+
				"<Status>ntp_peer_status_sys_peer</Status><Delay>0.51</Delay><Offset>-0.021</Offset><Dispersion>1.938</Dispersion>"+
				"<IsSysPeer>true</IsSysPeer></PeerInfoCommon><Time>33</Time></Entry>", xmlEsc(p.addr))
		} else {
			fmt.Fprintf(&b, "<Entry><PeerInfoCommon><HostMode>ntp_mode_client</HostMode><IsConfigured>true</IsConfigured><Address>%s</Address>"+
				"<ReferenceID>.INIT.</ReferenceID><HostPoll>64</HostPoll><Reachability>0</Reachability><Stratum>16</Stratum>"+
				"<Status>ntp_peer_status_reject</Status><Delay>0.0</Delay><Offset>0.0</Offset><Dispersion>15937.0</Dispersion>"+
				"<IsSysPeer>false</IsSysPeer></PeerInfoCommon><Time>0</Time></Entry>", xmlEsc(p.addr))
		}
	}
	b.WriteString("</PeerSummaryInfo></Associations></Node></NodeTable></NTP>")
	return b.String()
}

// xrXMLBGP is the BGP instance's neighbours: under DefaultVRF (global)
// or as the "default" entry of the VRF table (neighbour detail).
func (s *shell) xrXMLBGP(defaultVRF bool) string {
	f := s.dev.fleet
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.xrBGPState()
	s.dev.mu.Unlock()
	if !ok {
		return "<BGP><InstanceTable/></BGP>"
	}
	up := int64(f.opts.Now().Sub(f.bootTime(s.dev.index)) / time.Second)
	local := map[string]string{}
	for _, n := range f.neighbors(s.dev.index) {
		local[n.remoteIP] = n.localIP
	}
	var nb strings.Builder
	for _, p := range peers {
		state, est, pfx := "BGP_ST_IDLE", int64(0), 0
		if p.established {
			state, est, pfx = "BGP_ST_ESTAB", up, 1
		}
		fmt.Fprintf(&nb, "<Neighbor><Naming><NeighborAddress><AFI>IPv4</AFI><IPV4Address>%[1]s</IPV4Address></NeighborAddress></Naming>"+
			"<LocalAS>%[2]s</LocalAS><RemoteAS>%[3]s</RemoteAS><RouterID>0.0.0.0</RouterID><ConnectionState>%[4]s</ConnectionState>"+
			"<ConnectionAdminStatus>1</ConnectionAdminStatus><ConnectionEstablishedTime>%[5]d</ConnectionEstablishedTime>"+
			"<ConnectionLocalAddress><AFI>IPv4</AFI><IPV4Address>%[6]s</IPV4Address></ConnectionLocalAddress><ConnectionLocalPort>179</ConnectionLocalPort>"+
			"<ConnectionRemoteAddress><AFI>IPv4</AFI><IPV4Address>%[1]s</IPV4Address></ConnectionRemoteAddress><ConnectionRemotePort>179</ConnectionRemotePort>"+
			"<IsLocalAddressConfigured>false</IsLocalAddressConfigured><IsExternalNeighborNotDirectlyConnected>false</IsExternalNeighborNotDirectlyConnected>"+
			"<MessgesReceived>%[7]d</MessgesReceived><MessagesSent>%[8]d</MessagesSent><MessagesQueuedOut>0</MessagesQueuedOut>"+
			"<ConnectionDownCount>0</ConnectionDownCount><PreviousConnectionState>1</PreviousConnectionState>"+
			"<HoldTime>180</HoldTime><KeepAliveTime>60</KeepAliveTime><ConfiguredHoldTime>180</ConfiguredHoldTime><ConfiguredKeepalive>60</ConfiguredKeepalive>"+
			"<Suppress4ByteAs>false</Suppress4ByteAs><LocalASNoPrepend>false</LocalASNoPrepend><Description></Description>"+
			"<AFData><Entry><AFName>IPv4</AFName><PrefixesAccepted>%[9]d</PrefixesAccepted><PrefixesDenied>0</PrefixesDenied>"+
			"<PrefixesAdvertised>%[9]d</PrefixesAdvertised><NumberOfBestpaths>%[9]d</NumberOfBestpaths>"+
			"<RemovePrivateASFromUpdates>false</RemovePrivateASFromUpdates><SelectiveMultipathEligible>false</SelectiveMultipathEligible>"+
			"<RoutePolicyIn></RoutePolicyIn><RoutePolicyOut></RoutePolicyOut></Entry></AFData></Neighbor>",
			p.addr, asn, p.asn, state, est, local[p.addr], p.rcvd, p.sent, pfx)
	}
	proc := fmt.Sprintf("<GlobalProcessInfo><VRF><RouterID>%s</RouterID><HoldTime>180</HoldTime><KeepAliveTime>60</KeepAliveTime></VRF></GlobalProcessInfo>", rid)
	if defaultVRF {
		return "<BGP><InstanceTable><Instance><Naming><InstanceName>default</InstanceName></Naming><InstanceActive><DefaultVRF>" +
			proc + "<NeighborTable>" + nb.String() + "</NeighborTable></DefaultVRF></InstanceActive></Instance></InstanceTable></BGP>"
	}
	return "<BGP><InstanceTable><Instance><Naming><InstanceName>default</InstanceName></Naming><InstanceActive><VRFTable><VRF>" +
		"<Naming><VRFName>default</VRFName></Naming>" + proc + "<NeighborTable>" + nb.String() +
		"</NeighborTable></VRF></VRFTable></InstanceActive></Instance></InstanceTable></BGP>"
}

// xrXMLBGPConfig is the BGP configuration of the running configuration.
func (s *shell) xrXMLBGPConfig() string {
	s.dev.mu.Lock()
	asn, _, peers, ok := s.xrBGPState()
	s.dev.mu.Unlock()
	if !ok {
		return xrXMLReply(`<Get ItemNotFound="true"><Configuration><BGP/></Configuration></Get>`)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<Get><Configuration><BGP><Instance><Naming><InstanceName>default</InstanceName></Naming><InstanceAS><Naming><AS>0</AS></Naming>"+
		"<FourByteAS><Naming><AS>%s</AS></Naming><DefaultVRF><BGPEntity><NeighborTable>", asn)
	for _, p := range peers {
		fmt.Fprintf(&b, "<Neighbor><Naming><NeighborAddress><IPV4Address>%s</IPV4Address></NeighborAddress></Naming>"+
			"<RemoteAS><AS_XX>0</AS_XX><AS_YY>%s</AS_YY></RemoteAS><NeighborAFTable><NeighborAF><Naming><AFName>IPv4Unicast</AFName></Naming>"+
			"<Activate>true</Activate></NeighborAF></NeighborAFTable></Neighbor>", p.addr, p.asn)
	}
	b.WriteString("</NeighborTable></BGPEntity></DefaultVRF></FourByteAS></InstanceAS></Instance></BGP></Configuration></Get>")
	return xrXMLReply(b.String())
}

func (s *shell) xrXMLSNMP() string {
	var b strings.Builder
	b.WriteString("<SNMP><System>")
	for _, k := range []struct{ key, tag string }{{"chassis-id", "ChassisID"}, {"contact", "Contact"}, {"location", "Location"}} {
		if v := s.snmpSetting(k.key); v != "" {
			fmt.Fprintf(&b, "<%[1]s>%[2]s</%[1]s>", k.tag, xmlEsc(v))
		}
	}
	b.WriteString("</System><Administration><DefaultCommunityTable>")
	for _, l := range s.topLines("snmp-server", "community") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		priv, acl := "ReadOnly", ""
		for _, w := range f[3:] {
			switch strings.ToUpper(w) {
			case "RO":
			case "RW":
				priv = "ReadWrite"
			default:
				acl = w
			}
		}
		fmt.Fprintf(&b, "<DefaultCommunity><Naming><CommunityName>%s</CommunityName></Naming><Priviledge>%s</Priviledge>", xmlEsc(f[2]), priv)
		if acl != "" {
			fmt.Fprintf(&b, "<AccessList>%s</AccessList>", xmlEsc(acl))
		}
		b.WriteString("</DefaultCommunity>")
	}
	b.WriteString("</DefaultCommunityTable></Administration></SNMP>")
	return b.String()
}

func (s *shell) xrXMLAAA() string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("<AAA><Usernames>")
	for _, st := range s.dev.state().running.items {
		name, ok := strings.CutPrefix(st.line, "username ")
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "<Username><Naming><Name>%s</Name></Naming>", xmlEsc(strings.TrimSpace(name)))
		var groups []string
		secret := ""
		for _, ch := range st.children {
			f := strings.Fields(ch.line)
			switch {
			case len(f) == 2 && f[0] == "group":
				groups = append(groups, f[1])
			case len(f) >= 2 && (f[0] == "secret" || f[0] == "password"):
				secret = f[len(f)-1]
			}
		}
		if secret != "" {
			fmt.Fprintf(&b, "<Password><Password>%s</Password><Type>Type5</Type></Password>", xmlEsc(secret))
		}
		if len(groups) > 0 {
			b.WriteString("<UsergroupsUnderUsername>")
			for _, g := range groups {
				fmt.Fprintf(&b, "<UsergroupUnderUsername><Naming><Name>%s</Name></Naming></UsergroupUnderUsername>", xmlEsc(g))
			}
			b.WriteString("</UsergroupsUnderUsername>")
		}
		b.WriteString("</Username>")
	}
	b.WriteString("</Usernames></AAA>")
	return b.String()
}

// xrXMLSlotNames are the simulated chassis's slots: a line card, the
// route processor, a fan tray and a power module.
var xrXMLSlotNames = []string{"0", "RSP0", "FT0", "PM0"}

func xrXMLSlots() string {
	var b strings.Builder
	b.WriteString("<PlatformInventory><RackTable><Rack><Naming><Name>0</Name></Naming><SlotTable>")
	for _, n := range xrXMLSlotNames {
		fmt.Fprintf(&b, "<Slot><Naming><Name>%s</Name></Naming><CardTable><Card><Naming><Name>0</Name></Naming><Attributes><FRUInfo>"+
			"<ModuleAdministrativeState>ADMIN_UP</ModuleAdministrativeState><ModuleOperationalState>OPER_UP</ModuleOperationalState>"+
			"</FRUInfo></Attributes></Card></CardTable></Slot>", n)
	}
	b.WriteString("</SlotTable></Rack></RackTable></PlatformInventory>")
	return b.String()
}

// xrXMLEnvSlot is the environment of the slot a request names.
func xrXMLEnvSlot(body string) string {
	_, slot, _ := strings.Cut(body, "<slot>")
	slot, _, _ = strings.Cut(slot, "</slot>")
	sensor := func(name, value string, thresholds ...int) string {
		var t strings.Builder
		if len(thresholds) > 0 {
			t.WriteString("<ThresholdTable>")
			for _, v := range thresholds {
				fmt.Fprintf(&t, "<Threshold><ValueBrief>%d</ValueBrief></Threshold>", v)
			}
			t.WriteString("</ThresholdTable>")
		}
		return fmt.Sprintf("<SensorName><Naming><Name>%s</Name></Naming><ValueBrief>%s</ValueBrief>%s</SensorName>", name, value, t.String())
	}
	var sensors string
	switch slot {
	case "PM0":
		sensors = sensor("host__VOLT", "12000") + sensor("host__CURR", "15000") + sensor("host__PM", "3000")
	case "FT0":
		sensors = sensor("host__Inlet0", "285", -100, -50, 550, 650, 650, 800) +
			"<SensorNameTable><SensorName><Naming><Name>host__FanSpeed_0</Name></Naming><ValueDetailed><Status>1</Status>" +
			"<Value>6000</Value></ValueDetailed></SensorName></SensorNameTable>"
	default:
		sensors = sensor("host__Inlet0", "310", -100, -50, 550, 650, 650, 800)
	}
	return fmt.Sprintf("<EnvironmentalMonitoring><RackTable><Rack><Naming><rack>0</rack></Naming><SlotTable><Slot><Naming><slot>%s</slot></Naming>"+
		"<ModuleTable><Module><Naming><module>host</module></Naming><SensorTypeTable><SensorType><Naming><Type>all</Type></Naming>"+
		"<SensorNameTable>%s</SensorNameTable></SensorType></SensorTypeTable></Module></ModuleTable></Slot></SlotTable></Rack></RackTable>"+
		"</EnvironmentalMonitoring>", xmlEsc(slot), sensors)
}

// xrXMLRoute is the RIB entry of the address (and prefix length) a route
// request names, "" when there is none.
func (s *shell) xrXMLRoute(body string) string {
	_, addr, _ := strings.Cut(body, "<Address>")
	addr, _, _ = strings.Cut(addr, "</Address>")
	arg := addr
	if _, l, ok := strings.Cut(body, "<PrefixLength>"); ok {
		l, _, _ = strings.Cut(l, "</PrefixLength>")
		arg += "/" + l
	}
	r := (&showView{s: s, Args: []string{arg}}).LookupIn("default")
	if r == nil {
		return ""
	}
	proto := r.Proto
	if proto == "connected" || proto == "local" {
		proto = map[string]string{"connected": "connected", "local": "local"}[proto]
	}
	return fmt.Sprintf("<Route><Naming><Address>%s</Address></Naming><Prefix>%s</Prefix><PrefixLength>%s</PrefixLength>"+
		"<ProtocolName>%s</ProtocolName><Distance>%d</Distance><Priority>%d</Priority><RouteAge>%d</RouteAge>"+
		"<RoutePath><Entry><Address>%s</Address><InterfaceName>%s</InterfaceName></Entry></RoutePath></Route>",
		xmlEsc(addr), r.Prefix, r.Plen, proto, r.Distance, r.Distance, int64(r.Age/time.Second), r.NextHop, xmlEsc(r.Iface))
}

// xrXMLTraceroute answers a traceroute action: one hop with three probes
// to a directly connected neighbour, an error otherwise.
func (s *shell) xrXMLTraceroute(body string) string {
	_, dest, _ := strings.Cut(body, "<Destination>")
	dest, _, _ = strings.Cut(dest, "</Destination>")
	dest = strings.TrimSpace(dest)
	f := s.dev.fleet
	name := ""
	for _, n := range f.neighbors(s.dev.index) {
		if n.remoteIP == dest {
			name = f.hostnameOf(n.index)
		}
	}
	if name == "" {
		return "<Results><Error>% Destination unreachable</Error></Results>"
	}
	base := 1 + s.dev.index%5
	var b strings.Builder
	fmt.Fprintf(&b, "<Results><HopIndex>1</HopIndex><HopAddress>%s</HopAddress><HopHostName>%s</HopHostName>", dest, xmlEsc(name))
	for i := range 3 {
		fmt.Fprintf(&b, "<ProbeIndex>%d</ProbeIndex><DeltaTime>%d</DeltaTime>", i, base+i)
	}
	b.WriteString("</Results>")
	return b.String()
}
