// Package master is the core of gsalt-master: it answers every request a
// Salt 3006 minion, proxy or LocalClient sends to the master's request port
// (SALT-WIRE §4, §6, §7, §8), publishes jobs (§6.2) and fires Salt's events
// (§9). It knows nothing of sockets: the daemon (package masterd) feeds
// request frames to HandleRequest and hands the Publisher the frames to send
// on the publish port.
//
// What Master does, in Salt's terms:
//
//   - _auth: the decision of master/keys (accepted, pending, rejected,
//     denied, full, autosign, autoreject, open mode), v2 signed replies (v0/1
//     unsigned), token echo, publish_port, pub_sig when master_sign_pubkey is
//     set, salt/auth events.
//   - the session AES key: one Crypticle key for every minion, a shared
//     publish serial, Rotate (dropfile cachedir/.dfn, checked by Maintenance)
//     with the "key" event; undecryptable AES requests get the clear
//     "bad load" after a retry with the current key, so minions re-auth.
//   - clear commands: publish (root key authentication; the keys come from
//     the daemon, which writes cachedir/.<user>_key), runner (asynchronous,
//     salt/run/<jid>/new and /ret), ping; any other clear command gets {}.
//   - AES commands: _return, _minion_event, _pillar (send_private; pillar
//     from Options.Pillar, empty when nil), _master_opts, _master_tops,
//     _file_envs, _file_list, _file_list_emptydirs, _dir_list,
//     _symlink_list, _file_find, _file_hash, _file_hash_and_stat,
//     _serve_file (file_roots, refusing paths that leave a root, symbolic
//     links included), _mine, _mine_get, _mine_delete, _mine_flush,
//     _file_recv (cp.push: with file_recv on, chunks written under
//     cachedir/minions/<id>/files), revoke_auth; any other command
//     gets an encrypted {}.
//   - the minion data cache (cachedir/minions/<id>/data.p and mine.p, Salt's
//     layout and msgpack flavour) used for grain, pillar and ipcidr targeting
//     and for manage.present (ConnectedIDs: Salt's presence detection from
//     /proc/net/tcp against the ipv4/ipv6 grains).
//   - the job cache (master/jobcache) for loads and returns, plus a mirror
//     of each published load in Salt's local_cache layout
//     (cachedir/jobs/<hash>/jid, .load.p, .minions.p): Python's LocalClient
//     reads .load.p to check that a jid exists before waiting for returns.
//   - RunJob (publish and collect returns with the CLI's find_job logic)
//     and the runners of master/runners, run by the clear runner command.
//
// Deliberate differences from Salt 3006, all on the safe side:
//
//   - a _return is accepted only for an id with an accepted key (Salt only
//     checks that the id is well formed), and a duplicate return (same jid
//     and id) is dropped before its event is fired (Salt fires it again and
//     only refuses to store it);
//   - the clear publish, runner and wheel commands accept the keys of the
//     users the daemon wrote key files for (a user other than root or the
//     master's user is held to publisher_acl), tokens and eauth credentials
//     (package eauth, with Salt's ACLs); a load without any of them is
//     refused even for saltutil.find_job; credentials are dropped from the
//     stored job load (Salt keeps them);
//   - rotation dropfiles are noticed within a second instead of at the next
//     loop_interval;
//   - publishes are serialised so serials reach the publish socket in
//     increasing order (Salt's workers can race there);
//   - _mine with clear: true replaces the minion's mine (Salt 3006 crashes);
//   - gitfs and the other fileserver
//     backends, master_tops, peer publishing (minion_pub, minion_publish,
//     minion_runner, pub_ret), _syndic_return and state failure
//     sub-events are not implemented: those commands get {} like unknown ones.
package master
