// Package reactor is Salt 3006's reactor for gsalt-master: it watches the
// master event bus, matches each tag against the reactor option (a list of
// {tag glob: [reactor files]}, or a YAML file holding that list) with
// fnmatch like Salt, renders the matching reactor SLS files (local paths,
// which may be globs, or salt:// URLs served by the master's file_roots)
// with the event's tag and data, compiles them with Salt's state compiler
// rules (pad_funcs, verify_high, compile_high_data, order_chunks, the
// "cmd" → "local" alias) and runs the reactions the way Salt's ReactWrap
// does:
//
//   - local.<fun>: a job published to minions (tgt, tgt_type, arg, kwarg,
//     ret, jid, timeout; other keys travel as the publish kwargs, as Salt's
//     LocalClient.cmd_async sends them), without waiting for returns;
//   - runner.<fun> and wheel.<fun>: run on the master as user "Reactor"
//     (salt/run/<jid>/new|ret, salt/wheel/<jid>/new|ret); legacy reactions
//     with top-level arguments are matched against the function's
//     signature like salt.utils.args.format_call;
//   - caller.<fun>: an execution function run on the master.
//
// Both argument syntaxes are accepted: the 2017.7.2 "- args:" list of
// one-key maps (keyword arguments; legacy caller lists stay positional)
// and the older arg/kwarg or top-level keys. Templates see tag, data,
// opts (the master's), grains (the master host's), an empty pillar and
// salt[...] (execution functions on the master), as in Salt.
//
// Events flow from a bus subscription (the bus never waits for the
// reactor) through a dispatcher that only matches tags, into a bounded
// work queue (reactor_worker_hwm) served by reactor_worker_threads
// workers that render and start reactions; runner and wheel reactions
// are queued again for a worker, as in Salt. When the queue is full the
// event is dropped and counted (Stats). The salt/reactors/manage
// requests of the reactor runner (list, add, delete, is_leader,
// set_leader) are answered when they carry the root client key.
//
// "batch" on a local reaction is passed on in the job's client kwargs, and
// gsalt-master runs the job as a master-side batch (master.Master's
// BatchAsync), as the Salt 3006 tree gsalt is checked against does.
//
// Additions to Salt: loop protection (see LoopOptions): per-(tag, file,
// minion) token buckets, and detection of events caused by an earlier
// reaction of the same reactor file through job ids, with a small budget.
//
// Differences from Salt: reactor files of a glob are rendered in sorted
// order (Python uses directory order); __sls__ of a salt:// file is its
// path in file_roots (Salt's is the master's cached copy); reactions of
// different events run in parallel (Salt serialises them with a lock);
// "expr_form" is ignored as in Salt
// 3006, with a log line; a reactor map read from a file is re-read every
// reactor_refresh_interval seconds when it changed (Salt re-reads it for
// every event) and cannot be changed by reactor.add/delete;
// renderer_whitelist/blacklist are not applied.
package reactor
