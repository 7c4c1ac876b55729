// Package pillar is Salt 3006's pillar compiler on the master
// (salt.pillar.Pillar): it renders the top file of every pillar_roots
// environment, merges them, matches the minion against every target
// (compound by default; glob, pcre, list, grain, grain_pcre, pillar,
// pillar_pcre, pillar_exact, ipcidr, nodegroup, compound_pillar_exact
// through the target package), renders the matched SLS files with their
// includes and merges everything with pillar_source_merging_strategy.
// Problems Salt reports inside the pillar are collected under "_errors"
// with Salt's texts; the result keeps Salt's key order.
//
// What templates see follows Salt's master: grains are the minion's,
// pillar is empty (the pillar being built is not visible; with
// ext_pillar_first it is the ext_pillar result), opts are the master's
// options with the minion's id and grains, salt['mod.fun'] goes to
// Options.Caller, and imports read pillar_roots.
//
// Pillar cache (pillar_cache, pillar_cache_ttl, pillar_cache_backend),
// as Salt's PillarCache: compiled pillars are kept per minion id and
// requested pillarenv for pillar_cache_ttl seconds after the minion's
// entry was last written; grains, saltenv and pillar_override are not part
// of the key, so a hit returns the earlier pillar. Request.CleanCache (the
// clean_cache that saltutil.refresh_pillar sends, True by default in 3006)
// empties the minion's entry first, so a refresh always recompiles while a
// minion start uses the cache. The disk back-end writes
// cachedir/pillar_cache/<id> in Salt's CacheDisk format (readable by
// Salt's pillar cache runners and the other way round). Runners
// (Request.NoCache) compile without the cache, like Salt's.
//
// Deviations from Salt, all deliberate:
//   - Salt renders the top files of several environments in set order
//     (random between runs); gsalt uses base first, then the others in
//     configuration order (sorted when the order is unknown).
//   - ext_pillar modules (ExtRegistry, DefaultExt): cmd_json, cmd_yaml,
//     cmd_yamlex, file_tree, csv, nodegroups, libvirt, virtkey, stack,
//     sqlite3 (through the sqlite3 shell), postgres (pgx), the last two
//     over Salt's sql_base (ext_sqlbase.go), and git (the git binary in
//     place of GitPython: Salt's checkout rules and cache layout; per-remote
//     authentication parameters are refused as with GitPython; the master
//     fetches on git_pillar_update_interval when a compile finds the last
//     fetch older, not in a maintenance process), with Salt's argument
//     binding, merge, ext_pillar_first, exclude_ext_pillar,
//     on_demand_ext_pillar (Request.Ext) and failure texts ("Failed to
//     load ext_pillar NAME: ..." in _errors). Other modules (mongo, ...)
//     are logged as unavailable, as Salt does for an unknown one.
//     cmd_yamlex and #!yamlex files use render.DecodeYAMLEx, and their
//     !aggregate values stay aggregates for the aggregate merge strategy
//     within one compile (render.AggregateMarks). The
//     nodegroups order is the configuration's where the options keep it,
//     sorted otherwise (the YAML loader does not keep it). Nodegroup
//     membership (nodegroups, file_tree) uses the accepted keys in
//     pki_dir/minions and the compiled minion's grains as its cache entry.
//   - There are no decryption renderers: decrypt_pillar keys present in
//     the pillar are reported in _errors.
//   - top_file_merging_strategy, env_order and default_top are state top
//     options; Salt's pillar compiler ignores them and so does gsalt.
//   - The memory pillar cache back-end keeps pillars in this process
//     (Salt's lives for one request on a master and never hits).
//   - Render error texts (pillar_safe_render_error: False, top render
//     errors) carry gsalt's renderer messages, not Python's.
//   - file_ignore_regex/file_ignore_glob are not applied to pillar_roots.
package pillar
