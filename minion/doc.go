// Package minion is the gsalt minion: the daemon behind gsalt-minion (one
// identity, or a swarm of many in one process) and the behaviour of
// gsalt-call. It speaks Salt 3006's wire protocol (SALT-WIRE.md), so it works
// against a Salt 3006 salt-master as well as against gsalt-master.
//
// A Minion:
//
//   - keeps its RSA key pair in pki_dir (minion.pem / minion.pub, created on
//     first start) and the master's key in minion_master.pub (trusted on
//     first use; a changed master key is refused, master_finger is checked);
//   - authenticates with _auth, waiting acceptance_wait_time between
//     attempts while its key is pending (doubling up to
//     acceptance_wait_time_max), giving up after a rejection unless
//     rejected_retry, and sends the token on later authentications;
//   - fetches its pillar with _pillar (the send_private reply is checked
//     like Salt does), fires minion_start and salt/minion/<id>/start, runs
//     mine.update from mine_functions every mine_interval minutes;
//   - subscribes to the master's publisher with its id as the ZeroMQ
//     identity (topics per zmq_filtering), decrypts and replay-checks every
//     publish (the serial check restarts with each new session key),
//     re-authenticates when a publish fails its HMAC (and retries that
//     publish once), when a request is answered "bad load", and when the
//     publisher connection is re-established (a master restart);
//   - matches each job with the minion-side target matchers (grains and
//     pillar), drops duplicate jids (minion_jid_queue_hwm), runs jobs
//     concurrently, each in its own goroutine with a proc file
//     cachedir/proc/<jid>, and sends the _return load exactly as Salt's
//     minion does (§7.1), single- and multi-function;
//   - serves the execution modules the facilities they need through
//     modules.Env.Services: "master" (authenticated requests), "events",
//     "jobs" (saltutil.running/find_job/kill_job: killing a job cancels its
//     context; no return is sent for it, as for a killed Salt job process),
//     "pillar", "grains" and "files" (the salt:// file client);
//   - follows Salt's multi-master options (multimaster.go): a master list
//     connects to every master (hot multi-master: jobs from any master, each
//     return to the master that published it; fire_master events, beacons,
//     mine data and schedule returns to every master; one jid queue), or,
//     with master_type failover (or distributed, which Salt 3006 treats as
//     failover), to the first master that answers, checking the publisher
//     connection every master_alive_interval (__master_disconnected, next
//     master), returning to the first master with master_failback
//     (__master_failback, ping every master_failback_interval);
//     random_master/master_shuffle, retry_dns/retry_dns_count, master_tries
//     and master_type func are read as Salt reads them. All masters share
//     one pki_dir and one minion_master.pub, so they must share the master
//     key pair, as Salt's Multi Master tutorial says.
//
// Differences from Salt: jobs are goroutines of the minion process (every
// proc file carries the minion's pid, and signals other than 0 cancel the
// job rather than being delivered); the local event bus is in-process (no
// minion_event_*.ipc sockets); a job whose publish names a returner gsalt
// does not have (returners/builtin: pgjsonb) is refused instead of run with
// the returner skipped, and the returners' writes are queued and spooled
// in cachedir/returners while their database is down (Salt drops them); in
// hot multi-master the pillar, grains, beacons and schedule exist once
// (Salt keeps one copy per master: one schedule run per master), and
// Options.Prepare (a proxy's device) runs once, not once per master; the
// master alive check uses the minion's own publisher connection (Salt's
// status.master reads the system's TCP table).
//
// Every state run compiles the pillar afresh (the master's _pillar, or the
// local pillar_roots with file_client local: gsalt-call --local compiles it
// as salt-call --local does).
package minion
