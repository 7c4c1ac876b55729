// Package proxy serves network devices as Salt 3006 proxy minions, many
// devices in one process (gsalt-proxy).
//
// In Salt every device needs its own salt-proxy process. A Fleet runs each
// device as a complete minion of package minion, so the master sees one
// minion per device: its own id, its own key pair under pki_dir/<id>/
// (accepted with salt-key like any minion), its own cachedir/<id>/, grains,
// pillar and master connection, and its own jobs, which run concurrently.
// One slow or unreachable device never blocks the others.
//
// Each device reads its configuration like salt-proxy --proxyid ID
// (config.LoadProxy: DIR/proxy, proxy.d/*.conf, proxy.d/<id>/*.conf),
// authenticates, fetches its pillar and reads its proxy: mapping (the
// configuration's first, then the pillar's), whose proxytype selects the
// proxy module (package proxymod); the rest of the mapping is passed to the
// module's Init. A configuration with metaproxy: deltaproxy makes the
// device a Salt 3006 deltaproxy control proxy: the ids of its proxy:
// mapping are served too, each with its own key pair and pillar (whose
// proxy: mapping alone configures it, as in Salt).
//
// Framework features for fleets: every call into a device's proxy module
// (init, commands, ping, grains, keepalive, shutdown) passes through the
// device's gate, which runs them one at a time with a bounded queue
// (Options.QueueDepth; more fail with proxymod.ErrBusy) and within a
// process-wide limit of device operations in flight (Options.MaxConns).
// Execution functions reach their device through Env.Services["proxy"]
// (proxymod.Service, helper proxymod.With).
//
// Grains follow Salt's for proxies: the host's core grains reduced to those
// a salt-proxy reports, with kernel, os, os_family, ... set to "proxy",
// then the static grains file proxy.d/<id>/grains, the proxy module's
// grains once it is initialised, and the grains: option.
//
// Differences from Salt, on purpose:
//   - the key pair of every device is pki_dir/<id>/minion.pem, also when a
//     single --proxyid is given (salt-proxy uses pki_dir itself);
//   - the id is always the proxy id (an id: in the files is ignored);
//   - a proxy module whose Init fails does not stop the device: it stays
//     connected, test.ping returns false, and Init is retried every
//     proxy_keep_alive_interval minutes (Salt's salt-proxy aborts, its
//     deltaproxy skips the sub-proxy);
//   - a device without a proxy: mapping, or with an unknown proxytype, is
//     retried with a growing pause (Options.RestartMin/Max) instead of
//     aborting the process;
//   - proxy_merge_pillar_in_opts and proxy_mines_pillar (mine_functions and
//     mine_interval taken from the pillar) are not applied;
//   - Salt 3006's deltaproxy leaves the proxy module's grains out of its
//     control and sub-proxies' grains (observed with the dummy proxytype);
//     gsalt merges them as salt-proxy does;
//   - the pkg and service execution modules of the host are not offered on
//     proxies (Salt's __virtual__ refuses them there too); a proxytype
//     provides its own (the dummy proxy's, like Salt's dummyproxy_*).
package proxy
