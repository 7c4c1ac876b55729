package devsim

// handler runs one exec command and returns its output.
type handler func(s *shell, args []string) string

// grammar is the Go side of a configuration language, selected by platform.yaml's "grammar".
type grammar struct {
	dialect      func() *dialect
	configPrompt func(s *shell) string
	// renderBody renders a configuration tree; nil means the dialect's own renderer.
	renderBody func(d *dialect) func(c *config) string
}

// grammars lists the configuration grammars platform definitions can name.
func grammars() map[string]grammar {
	return map[string]grammar{
		"ios":   {dialect: iosDialect, configPrompt: iosConfigPrompt},
		"eos":   {dialect: eosDialect, configPrompt: eosConfigPrompt},
		"nxos":  {dialect: nxosDialect, configPrompt: nxosConfigPrompt, renderBody: func(*dialect) func(*config) string { return nxosRenderBody }},
		"iosxr": {dialect: xrDialect, configPrompt: xrConfigPrompt, renderBody: func(d *dialect) func(*config) string { return func(c *config) string { return xrRender(d, c) } }},
	}
}

// handlers lists the Go command handlers platform definitions can name. What lives here is
// behaviour (state changes, file systems, sessions, commits, JSON encodings, outputs with
// computed layouts); fixed-layout show outputs are templates in the platform folders.
func handlers() map[string]handler {
	return map[string]handler{
		// shared
		"enable":             cmdEnable,
		"disable":            cmdDisable,
		"exit":               cmdExit,
		"noop":               cmdNoop,
		"terminal_length":    cmdTermLength,
		"terminal_width":     cmdTermWidth,
		"configure_terminal": cmdConfigureTerminal,
		"copy":               cmdCopy,
		"delete":             cmdDelete,
		"dir":                cmdDir,
		"more":               cmdMore,
		"write_memory":       cmdWriteMemory,
		"show_running":       cmdShowRunning,
		"show_startup":       cmdShowStartup,
		// IOS
		"ios_tclsh":                func(s *shell, _ []string) string { s.mode = modeTcl; return "" },
		"ios_show_interfaces":      func(s *shell, a []string) string { return showInterfacesDetail(s, a, iosInterfaceDetail) },
		"ios_configure":            iosConfigure,
		"ios_configure_replace":    iosConfigureReplace,
		"ios_show_version":         iosShowVersion,
		"ios_show_hosts":           iosShowHosts,
		"ios_show_ip_interface":    iosShowIPInterface,
		"ios_show_ip_int_brief":    iosIPIntBrief,
		"ios_show_bgp_all_summary": func(s *shell, _ []string) string { return iosShowBGP(s, true) },
		"ios_show_bgp_summary":     func(s *shell, _ []string) string { return iosShowBGP(s, false) },
		"ios_show_bgp_neighbors":   iosShowBGPNeighbors,
		"ios_show_snmp_chassis":    iosShowSNMPChassis,
		"ios_archive_diff":         iosArchiveDiff,
		"ios_archive_incremental":  iosIncrementalDiff,
		"ios_show_lldp_neighbors":  func(s *shell, a []string) string { return showLLDP(s, a, iosLLDP) },
		"eos_show_lldp_neighbors":  func(s *shell, a []string) string { return showLLDP(s, a, eosLLDP) },
		"eos_show_interfaces":      eosShowInterfaces,
		// EOS
		"eos_configure_session":      eosConfigureSession,
		"eos_configure_replace":      eosConfigureReplace,
		"eos_show_version":           eosShowVersion,
		"eos_show_hostname":          eosShowHostname,
		"eos_show_interfaces_status": func(s *shell, _ []string) string { return eosShowIfStatus(s) },
		"eos_show_ip_int_brief":      func(s *shell, _ []string) string { return eosIPIntBrief(s) },
		"eos_show_bgp_summary":       func(s *shell, _ []string) string { return eosShowBGP(s) },
		"eos_show_session_config":    eosShowSessionConfig,
		"eos_show_sessions":          eosShowSessions,
		"eos_show_mac":               eosShowMAC,
		"eos_show_snmp_v2mib":        eosShowSNMPv2MIB,
		"eos_show_users_accounts":    eosShowUsersAccounts,
		"eos_show_transceivers":      eosShowTransceivers,
		"eos_version_json":           eosVersionJSON,
		"eos_hostname_json":          eosHostnameJSON,
		"eos_interfaces_json":        eosInterfacesJSON,
		"eos_lldp_json":              eosLLDPJSON,
		"eos_arp_json":               eosARPJSON,
		"eos_ntp_json":               eosNTPJSON,
		"eos_bgp_json":               eosBGPJSON,
		"eos_snmp_v2mib_json":        eosSNMPv2MIBJSON,
		"eos_users_accounts_json":    eosUsersAccountsJSON,
		"eos_transceivers_json":      eosTransceiversJSON,
		// NX-OS
		"nxos_dont_ask":             func(s *shell, _ []string) string { s.nxosSess().dontAsk = true; return "" },
		"nxos_no_dont_ask":          func(s *shell, _ []string) string { s.nxosSess().dontAsk = false; return "" },
		"nxos_configure":            nxosConfigure,
		"nxos_copy":                 nxosCopy,
		"nxos_delete":               nxosDelete,
		"nxos_dir":                  nxosDir,
		"nxos_checkpoint":           nxosCheckpoint,
		"nxos_no_checkpoint":        nxosNoCheckpoint,
		"nxos_rollback":             nxosRollback,
		"nxos_show_diff":            nxosShowDiff,
		"nxos_show_checkpoints":     nxosShowCheckpoints,
		"nxos_show_file":            nxosShowFile,
		"nxos_show_version":         nxosShowVersion,
		"nxos_show_hostname":        nxosShowHostname,
		"nxos_show_hosts":           nxosShowHosts,
		"nxos_show_clock":           nxosShowClock,
		"nxos_show_inventory":       nxosShowInventory,
		"nxos_inventory_json":       nxosInventoryJSON,
		"nxos_interface_json":       nxosInterfaceJSON,
		"nxos_show_running":         nxosShowRunning,
		"nxos_show_startup":         nxosShowStartup,
		"nxos_show_interface":       nxosShowInterface,
		"nxos_show_ip_interface":    nxosShowIPInterface,
		"nxos_show_ipv6_interface":  nxosShowIPv6Interface,
		"nxos_show_lldp_neighbors":  nxosShowLLDP,
		"nxos_show_arp":             nxosShowARP,
		"nxos_show_mac":             nxosShowMAC,
		"nxos_show_ntp_peers":       nxosShowNTPPeers,
		"nxos_show_resources":       nxosShowResources,
		"nxos_show_temperature":     nxosShowTemperature,
		"nxos_show_bgp_all_summary": nxosShowBGP,
		"nxos_ping":                 nxosPing,
		"nxos_traceroute":           nxosTraceroute,
		// IOS XR
		"xr_prompt_timestamp":    func(s *shell, _ []string) string { s.xrs().noStamp = false; return "" },
		"xr_prompt_no_timestamp": func(s *shell, _ []string) string { s.xrs().noStamp = true; return "" },
		"xr_configure":           func(s *shell, _ []string) string { return xrConfigure(s, false) },
		"xr_configure_exclusive": func(s *shell, _ []string) string { return xrConfigure(s, true) },
		"xr_rollback_last":       xrRollbackLast,
		"xr_rollback_to":         xrRollbackTo,
		"xr_show_version":        xrShowVersion,
		"xr_show_clock":          xrShowClock,
		"xr_show_inventory":      xrShowInventory,
		"xr_show_running":        xrShowRunning,
		"xr_show_interfaces":     xrShowInterfaces,
		"xr_show_ipv4_interface": xrShowIPv4Interface,
		"xr_show_lldp_neighbors": xrShowLLDP,
		"xr_show_arp":            xrShowARP,
		"xr_show_ntp":            xrShowNTP,
		"xr_show_bgp_summary":    xrShowBGP,
		"xr_show_configuration":  xrShowConfiguration,
		"xr_show_commit_diff":    xrShowCommitDiff,
		"xr_xml":                 xrXMLEnter,
	}
}
