// Package config reads Salt 3006 configuration files unchanged for
// gsalt-master, gsalt-minion, gsalt-proxy and the CLIs.
//
// LoadMaster, LoadMinion and LoadProxy follow salt.config.master_config,
// minion_config and proxy_config: the main file (DIR/master, DIR/minion,
// DIR/proxy; missing is fine), then the default_include glob
// (master.d/*.conf, minion.d/*.conf, proxy.d/*.conf, sorted; the files merge
// recursively into each other with lists concatenated, and the result
// replaces top-level keys of the main file), then the main file's include
// globs, then Salt's full default tables (Linux paths) and Salt's
// post-processing: root_dir re-rooting of path options, log_dir, id
// resolution, append_domain, append_minionid_config_dirs, file_roots and
// pillar_roots normalisation, open_mode/auto_accept forced to literal true,
// fileserver_backend aliases (git → gitfs), nodegroups repacking, ssl and
// discovery defaults. The resulting option map equals Salt's for every key
// (checked against real Salt in the tests when GSALT_SALT_SRC is set),
// except __cli (the program name).
//
// YAML is decoded with PyYAML's YAML 1.1 rules as Salt's loader applies them;
// see DecodeYAML for the exact scalar conversions (yes/no/on/off booleans,
// 0755 read as decimal 755 like Salt, 1e3 a string, timestamps strings).
//
// Known differences from Salt: the host name (os.Hostname) replaces Salt's
// FQDN guess for ids; a UTF-8 byte order mark at the start of minion_id is
// dropped (Salt keeps it in the id); id_function is refused with
// ErrUnsupported; sdb:// values are not resolved; glob matches are sorted
// (Python returns directory order); ssl mappings keep their option names
// instead of Python ssl constants; SALT_CONFIG_DIR-style environment
// variables and *.template files are not consulted; type errors in the
// options gsalt reads are errors (Salt only warns).
package config
