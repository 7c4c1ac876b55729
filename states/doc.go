// Package states is Salt 3006's state system: the state-function registry
// (Registry, Function, Call, Ret), the compiler and runner of salt/state.py
// and the state execution module of salt/modules/state.py.
//
// SLS and top files are fetched through the minion's file client (the
// "files" service of modules.Env: a render.FileSource, and a FileLister for
// globs and environments) and rendered with the render package (the
// "renderer" option, "#!" shebangs). The compiler follows Salt step by
// step: include (absolute, relative ".x"/"..x", "env: sls"), exclude,
// extend, names, "mod.fun" shorthands, __sls__/__env__, state_auto_order,
// order (numbers, first, last, negative), requisites (require, watch,
// onchanges, onfail, prereq, use, listen, their _in and _any forms,
// "sls:" and "id:" targets, globs on IDs and names), onlyif/unless/creates
// (commands through cmd.retcode and "fun:" dicts), check_cmd, retry,
// failhard, test mode, mock, slots ("__slot__:salt:..."), global state
// conditions, disabled requisites and state runs, state events; highstate
// top files with the merge, same and merge_all strategies, env_order,
// default_top, state_top, state_top_saltenv, saltenv and every "match:"
// form. Error texts, validation messages, ret dicts (key order included)
// and retcodes are Salt's; golden tests compare them with a real Salt 3006.
//
// RegisterExec registers state.apply, sls, highstate, test, single,
// sls_id, high, low, show_sls, show_low_sls, show_highstate, show_lowstate,
// show_top, show_states, sls_exists, id_exists and running. State modules
// live in states/builtin.
//
// parallel: True states run on goroutines (Salt forks a process each):
// the run goes on with a "Started in a separate process" placeholder,
// requisites wait for the state, and the run's end merges every result
// (with __parallel__) as State.reconcile_procs does.
//
// Not done: mod_aggregate, mod_init,
// reload_modules/grains/pillar, cache=True, sync_mods and the highstate
// cache file, pillar_enc, umask (validated, not applied), master_tops, and
// the master's options (state_top, renderer, ...) of a remote minion: the
// minion's own options are used.
package states
