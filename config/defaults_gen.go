// Code generated from the Salt 3006 default option tables (Linux paths); DO NOT EDIT.
// Regenerate by dumping salt.config.DEFAULT_*_OPTS and VALID_OPTS.

package config

// minionDefaults returns a fresh copy of Salt 3006's minion defaults.
func minionDefaults(user string) map[string]any {
	return map[string]any{
		"interface":                      "0.0.0.0",
		"master":                         "salt",
		"master_type":                    "str",
		"master_uri_format":              "default",
		"source_interface_name":          "",
		"source_address":                 "",
		"source_ret_port":                0,
		"source_publish_port":            0,
		"master_port":                    4506,
		"master_finger":                  "",
		"master_shuffle":                 false,
		"master_alive_interval":          0,
		"master_failback":                false,
		"master_failback_interval":       0,
		"verify_master_pubkey_sign":      false,
		"sign_pub_messages":              false,
		"always_verify_signature":        false,
		"master_sign_key_name":           "master_sign",
		"syndic_finger":                  "",
		"user":                           user,
		"root_dir":                       "/",
		"pki_dir":                        "/etc/salt/pki/minion",
		"id":                             "",
		"id_function":                    map[string]any{},
		"cachedir":                       "/var/cache/salt/minion",
		"append_minionid_config_dirs":    []any{},
		"cache_jobs":                     false,
		"grains_blacklist":               []any{},
		"grains_cache":                   false,
		"grains_cache_expiration":        300,
		"grains_deep_merge":              false,
		"conf_file":                      "/etc/salt/minion",
		"sock_dir":                       "/var/run/salt/minion",
		"sock_pool_size":                 1,
		"backup_mode":                    "",
		"renderer":                       "jinja|yaml",
		"renderer_whitelist":             []any{},
		"renderer_blacklist":             []any{},
		"random_startup_delay":           0,
		"failhard":                       false,
		"autoload_dynamic_modules":       true,
		"saltenv":                        nil,
		"lock_saltenv":                   false,
		"pillarenv":                      nil,
		"pillarenv_from_saltenv":         false,
		"pillar_opts":                    false,
		"pillar_source_merging_strategy": "smart",
		"pillar_merge_lists":             false,
		"pillar_includes_override_sls":   false,
		"pillar_cache":                   false,
		"pillar_cache_ttl":               3600,
		"pillar_cache_backend":           "disk",
		"gpg_cache":                      false,
		"gpg_cache_ttl":                  86400,
		"gpg_cache_backend":              "disk",
		"extension_modules":              "/var/cache/salt/minion/extmods",
		"state_top":                      "top.sls",
		"state_top_saltenv":              nil,
		"startup_states":                 "",
		"sls_list":                       []any{},
		"start_event_grains":             []any{},
		"top_file":                       "",
		"thoriumenv":                     nil,
		"thorium_top":                    "top.sls",
		"thorium_interval":               float64(0.5),
		"thorium_roots":                  map[string]any{"base": []any{"/srv/thorium"}},
		"file_client":                    "remote",
		"local":                          false,
		"use_master_when_local":          false,
		"file_roots":                     map[string]any{"base": []any{"/srv/salt", "/srv/spm/salt"}},
		"top_file_merging_strategy":      "merge",
		"env_order":                      []any{},
		"default_top":                    "base",
		"file_recv":                      false,
		"file_recv_max_size":             100,
		"file_ignore_regex":              []any{},
		"file_ignore_glob":               []any{},
		"fileserver_backend":             []any{"roots"},
		"fileserver_followsymlinks":      true,
		"fileserver_ignoresymlinks":      false,
		"pillar_roots":                   map[string]any{"base": []any{"/srv/pillar", "/srv/spm/pillar"}},
		"on_demand_ext_pillar":           []any{"libvirt", "virtkey"},
		"decrypt_pillar":                 []any{},
		"decrypt_pillar_delimiter":       ":",
		"decrypt_pillar_default":         "gpg",
		"decrypt_pillar_renderers":       []any{"gpg"},
		"gpg_decrypt_must_succeed":       false,
		"roots_update_interval":          60,
		"azurefs_update_interval":        60,
		"gitfs_update_interval":          60,
		"git_pillar_update_interval":     60,
		"hgfs_update_interval":           60,
		"minionfs_update_interval":       60,
		"s3fs_update_interval":           60,
		"svnfs_update_interval":          60,
		"git_pillar_base":                "master",
		"git_pillar_branch":              "master",
		"git_pillar_env":                 "",
		"git_pillar_fallback":            "",
		"git_pillar_root":                "",
		"git_pillar_ssl_verify":          true,
		"git_pillar_global_lock":         true,
		"git_pillar_user":                "",
		"git_pillar_password":            "",
		"git_pillar_insecure_auth":       false,
		"git_pillar_privkey":             "",
		"git_pillar_pubkey":              "",
		"git_pillar_passphrase":          "",
		"git_pillar_refspecs":            []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
		"git_pillar_includes":            true,
		"gitfs_remotes":                  []any{},
		"gitfs_mountpoint":               "",
		"gitfs_root":                     "",
		"gitfs_base":                     "master",
		"gitfs_fallback":                 "",
		"gitfs_user":                     "",
		"gitfs_password":                 "",
		"gitfs_insecure_auth":            false,
		"gitfs_privkey":                  "",
		"gitfs_pubkey":                   "",
		"gitfs_passphrase":               "",
		"gitfs_saltenv_whitelist":        []any{},
		"gitfs_saltenv_blacklist":        []any{},
		"gitfs_global_lock":              true,
		"gitfs_ssl_verify":               true,
		"gitfs_saltenv":                  []any{},
		"gitfs_ref_types":                []any{"branch", "tag", "sha"},
		"gitfs_refspecs":                 []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
		"gitfs_disable_saltenv_mapping":  false,
		"unique_jid":                     false,
		"hash_type":                      "sha256",
		"optimization_order":             []any{0, 1, 2},
		"disable_modules":                []any{},
		"disable_returners":              []any{},
		"whitelist_modules":              []any{},
		"module_dirs":                    []any{},
		"returner_dirs":                  []any{},
		"grains_dirs":                    []any{},
		"states_dirs":                    []any{},
		"render_dirs":                    []any{},
		"outputter_dirs":                 []any{},
		"utils_dirs":                     []any{},
		"publisher_acl":                  map[string]any{},
		"publisher_acl_blacklist":        map[string]any{},
		"providers":                      map[string]any{},
		"clean_dynamic_modules":          true,
		"open_mode":                      false,
		"auto_accept":                    true,
		"autosign_timeout":               120,
		"multiprocessing":                true,
		"process_count_max":              -1,
		"mine_enabled":                   true,
		"mine_return_job":                false,
		"mine_interval":                  60,
		"ipc_mode":                       "ipc",
		"ipc_write_buffer":               0,
		"ipv6":                           nil,
		"file_buffer_size":               262144,
		"tcp_pub_port":                   4510,
		"tcp_pull_port":                  4511,
		"tcp_authentication_retries":     5,
		"tcp_reconnect_backoff":          1,
		"log_file":                       "/var/log/salt/minion",
		"log_level":                      "warning",
		"log_level_logfile":              nil,
		"log_datefmt":                    "%H:%M:%S",
		"log_datefmt_logfile":            "%Y-%m-%d %H:%M:%S",
		"log_fmt_console":                "[%(levelname)-8s] %(message)s",
		"log_fmt_logfile":                "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s",
		"log_fmt_jid":                    "[JID: %(jid)s]",
		"log_granular_levels":            map[string]any{},
		"log_rotate_max_bytes":           0,
		"log_rotate_backup_count":        0,
		"max_event_size":                 1048576,
		"enable_legacy_startup_events":   true,
		"test":                           false,
		"ext_job_cache":                  "",
		"cython_enable":                  false,
		"enable_fqdns_grains":            false,
		"enable_gpu_grains":              true,
		"enable_zip_modules":             false,
		"state_verbose":                  true,
		"state_output":                   "full",
		"state_output_diff":              false,
		"state_output_profile":           true,
		"state_auto_order":               true,
		"state_events":                   false,
		"state_aggregate":                false,
		"state_queue":                    false,
		"snapper_states":                 false,
		"snapper_states_config":          "root",
		"acceptance_wait_time":           10,
		"acceptance_wait_time_max":       0,
		"rejected_retry":                 false,
		"loop_interval":                  1,
		"verify_env":                     true,
		"grains":                         map[string]any{},
		"permissive_pki_access":          false,
		"default_include":                "minion.d/*.conf",
		"update_url":                     false,
		"update_restart_services":        []any{},
		"retry_dns":                      30,
		"retry_dns_count":                nil,
		"resolve_dns_fallback":           true,
		"recon_max":                      10000,
		"recon_default":                  1000,
		"recon_randomize":                true,
		"return_retry_timer":             5,
		"return_retry_timer_max":         10,
		"return_retry_tries":             3,
		"random_reauth_delay":            10,
		"winrepo_source_dir":             "salt://win/repo-ng/",
		"winrepo_dir":                    "/srv/salt/win/repo",
		"winrepo_dir_ng":                 "/srv/salt/win/repo-ng",
		"winrepo_cachefile":              "winrepo.p",
		"winrepo_cache_expire_max":       604800,
		"winrepo_cache_expire_min":       1800,
		"winrepo_remotes":                []any{"https://github.com/saltstack/salt-winrepo.git"},
		"winrepo_remotes_ng":             []any{"https://github.com/saltstack/salt-winrepo-ng.git"},
		"winrepo_branch":                 "master",
		"winrepo_fallback":               "",
		"winrepo_ssl_verify":             true,
		"winrepo_user":                   "",
		"winrepo_password":               "",
		"winrepo_insecure_auth":          false,
		"winrepo_privkey":                "",
		"winrepo_pubkey":                 "",
		"winrepo_passphrase":             "",
		"winrepo_refspecs":               []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
		"pidfile":                        "/var/run/salt-minion.pid",
		"range_server":                   "range:80",
		"reactor_refresh_interval":       60,
		"reactor_worker_threads":         10,
		"reactor_worker_hwm":             10000,
		"engines":                        []any{},
		"tcp_keepalive":                  true,
		"tcp_keepalive_idle":             300,
		"tcp_keepalive_cnt":              -1,
		"tcp_keepalive_intvl":            -1,
		"modules_max_memory":             -1,
		"grains_refresh_every":           0,
		"minion_id_caching":              true,
		"minion_id_lowercase":            false,
		"minion_id_remove_domain":        false,
		"keysize":                        2048,
		"transport":                      "zeromq",
		"auth_timeout":                   5,
		"auth_tries":                     7,
		"master_tries":                   1,
		"master_tops_first":              false,
		"auth_safemode":                  false,
		"random_master":                  false,
		"cluster_mode":                   false,
		"restart_on_error":               false,
		"ping_interval":                  0,
		"username":                       nil,
		"password":                       nil,
		"zmq_filtering":                  false,
		"zmq_monitor":                    false,
		"cache_sreqs":                    true,
		"cmd_safe":                       true,
		"sudo_user":                      "",
		"http_connect_timeout":           float64(20.0),
		"http_request_timeout":           float64(3600.0),
		"http_max_body":                  107374182400,
		"event_match_type":               "startswith",
		"minion_restart_command":         []any{},
		"pub_ret":                        true,
		"proxy_host":                     "",
		"proxy_username":                 "",
		"proxy_password":                 "",
		"proxy_port":                     0,
		"minion_jid_queue_hwm":           100,
		"ssl":                            nil,
		"multifunc_ordered":              false,
		"beacons_before_connect":         false,
		"scheduler_before_connect":       false,
		"cache":                          "localfs",
		"salt_cp_chunk_size":             65536,
		"extmod_whitelist":               map[string]any{},
		"extmod_blacklist":               map[string]any{},
		"minion_sign_messages":           false,
		"discovery":                      false,
		"schedule":                       map[string]any{},
		"ssh_merge_pillar":               true,
		"disabled_requisites":            []any{},
		"global_state_conditions":        nil,
		"reactor_niceness":               nil,
		"fips_mode":                      false,
		"server_id_use_crc":              false,
	}
}

// masterDefaults returns a fresh copy of Salt 3006's master defaults.
func masterDefaults(user, home string) map[string]any {
	return map[string]any{
		"interface":                      "0.0.0.0",
		"publish_port":                   4505,
		"zmq_backlog":                    1000,
		"pub_hwm":                        1000,
		"auth_mode":                      1,
		"user":                           user,
		"worker_threads":                 5,
		"sock_dir":                       "/var/run/salt/master",
		"sock_pool_size":                 1,
		"ret_port":                       4506,
		"timeout":                        5,
		"keep_jobs":                      24,
		"keep_jobs_seconds":              86400,
		"archive_jobs":                   false,
		"root_dir":                       "/",
		"pki_dir":                        "/etc/salt/pki/master",
		"key_cache":                      "",
		"cachedir":                       "/var/cache/salt/master",
		"file_roots":                     map[string]any{"base": []any{"/srv/salt", "/srv/spm/salt"}},
		"master_roots":                   map[string]any{"base": []any{"/srv/salt-master"}},
		"pillar_roots":                   map[string]any{"base": []any{"/srv/pillar", "/srv/spm/pillar"}},
		"on_demand_ext_pillar":           []any{"libvirt", "virtkey"},
		"decrypt_pillar":                 []any{},
		"decrypt_pillar_delimiter":       ":",
		"decrypt_pillar_default":         "gpg",
		"decrypt_pillar_renderers":       []any{"gpg"},
		"gpg_decrypt_must_succeed":       false,
		"thoriumenv":                     nil,
		"thorium_top":                    "top.sls",
		"thorium_interval":               float64(0.5),
		"thorium_roots":                  map[string]any{"base": []any{"/srv/thorium"}},
		"top_file_merging_strategy":      "merge",
		"env_order":                      []any{},
		"saltenv":                        nil,
		"lock_saltenv":                   false,
		"pillarenv":                      nil,
		"default_top":                    "base",
		"file_client":                    "local",
		"local":                          true,
		"roots_update_interval":          60,
		"azurefs_update_interval":        60,
		"gitfs_update_interval":          60,
		"git_pillar_update_interval":     60,
		"hgfs_update_interval":           60,
		"minionfs_update_interval":       60,
		"s3fs_update_interval":           60,
		"svnfs_update_interval":          60,
		"git_pillar_base":                "master",
		"git_pillar_branch":              "master",
		"git_pillar_env":                 "",
		"git_pillar_fallback":            "",
		"git_pillar_root":                "",
		"git_pillar_ssl_verify":          true,
		"git_pillar_global_lock":         true,
		"git_pillar_user":                "",
		"git_pillar_password":            "",
		"git_pillar_insecure_auth":       false,
		"git_pillar_privkey":             "",
		"git_pillar_pubkey":              "",
		"git_pillar_passphrase":          "",
		"git_pillar_refspecs":            []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
		"git_pillar_includes":            true,
		"git_pillar_verify_config":       true,
		"gitfs_remotes":                  []any{},
		"gitfs_mountpoint":               "",
		"gitfs_root":                     "",
		"gitfs_base":                     "master",
		"gitfs_fallback":                 "",
		"gitfs_user":                     "",
		"gitfs_password":                 "",
		"gitfs_insecure_auth":            false,
		"gitfs_privkey":                  "",
		"gitfs_pubkey":                   "",
		"gitfs_passphrase":               "",
		"gitfs_saltenv_whitelist":        []any{},
		"gitfs_saltenv_blacklist":        []any{},
		"gitfs_global_lock":              true,
		"gitfs_ssl_verify":               true,
		"gitfs_saltenv":                  []any{},
		"gitfs_ref_types":                []any{"branch", "tag", "sha"},
		"gitfs_refspecs":                 []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
		"gitfs_disable_saltenv_mapping":  false,
		"hgfs_remotes":                   []any{},
		"hgfs_mountpoint":                "",
		"hgfs_root":                      "",
		"hgfs_base":                      "default",
		"hgfs_branch_method":             "branches",
		"hgfs_saltenv_whitelist":         []any{},
		"hgfs_saltenv_blacklist":         []any{},
		"show_timeout":                   true,
		"show_jid":                       false,
		"unique_jid":                     false,
		"svnfs_remotes":                  []any{},
		"svnfs_mountpoint":               "",
		"svnfs_root":                     "",
		"svnfs_trunk":                    "trunk",
		"svnfs_branches":                 "branches",
		"svnfs_tags":                     "tags",
		"svnfs_saltenv_whitelist":        []any{},
		"svnfs_saltenv_blacklist":        []any{},
		"max_event_size":                 1048576,
		"master_stats":                   false,
		"master_stats_event_iter":        60,
		"minionfs_env":                   "base",
		"minionfs_mountpoint":            "",
		"minionfs_whitelist":             []any{},
		"minionfs_blacklist":             []any{},
		"ext_pillar":                     []any{},
		"pillar_version":                 2,
		"pillar_opts":                    false,
		"pillar_safe_render_error":       true,
		"pillar_source_merging_strategy": "smart",
		"pillar_merge_lists":             false,
		"pillar_includes_override_sls":   false,
		"pillar_cache":                   false,
		"pillar_cache_ttl":               3600,
		"pillar_cache_backend":           "disk",
		"gpg_cache":                      false,
		"gpg_cache_ttl":                  86400,
		"gpg_cache_backend":              "disk",
		"ping_on_rotate":                 false,
		"peer":                           map[string]any{},
		"preserve_minion_cache":          false,
		"syndic_master":                  "masterofmasters",
		"syndic_failover":                "random",
		"syndic_forward_all_events":      false,
		"syndic_log_file":                "/var/log/salt/syndic",
		"syndic_pidfile":                 "/var/run/salt-syndic.pid",
		"outputter_dirs":                 []any{},
		"runner_dirs":                    []any{},
		"utils_dirs":                     []any{},
		"client_acl_verify":              true,
		"publisher_acl":                  map[string]any{},
		"publisher_acl_blacklist":        map[string]any{},
		"sudo_acl":                       false,
		"external_auth":                  map[string]any{},
		"token_expire":                   43200,
		"token_expire_user_override":     false,
		"permissive_acl":                 false,
		"keep_acl_in_token":              false,
		"eauth_acl_module":               "",
		"eauth_tokens":                   "localfs",
		"extension_modules":              "/var/cache/salt/master/extmods",
		"module_dirs":                    []any{},
		"file_recv":                      false,
		"file_recv_max_size":             100,
		"file_buffer_size":               1048576,
		"file_ignore_regex":              []any{},
		"file_ignore_glob":               []any{},
		"fileserver_backend":             []any{"roots"},
		"fileserver_followsymlinks":      true,
		"fileserver_ignoresymlinks":      false,
		"fileserver_verify_config":       true,
		"max_open_files":                 100000,
		"hash_type":                      "sha256",
		"optimization_order":             []any{0, 1, 2},
		"conf_file":                      "/etc/salt/master",
		"open_mode":                      false,
		"auto_accept":                    false,
		"renderer":                       "jinja|yaml",
		"renderer_whitelist":             []any{},
		"renderer_blacklist":             []any{},
		"failhard":                       false,
		"state_top":                      "top.sls",
		"state_top_saltenv":              nil,
		"master_tops":                    map[string]any{},
		"master_tops_first":              false,
		"order_masters":                  false,
		"job_cache":                      true,
		"ext_job_cache":                  "",
		"master_job_cache":               "local_cache",
		"job_cache_store_endtime":        false,
		"minion_data_cache":              true,
		"enforce_mine_cache":             false,
		"ipc_mode":                       "ipc",
		"ipc_write_buffer":               0,
		"req_server_niceness":            nil,
		"pub_server_niceness":            nil,
		"fileserver_update_niceness":     nil,
		"mworker_niceness":               nil,
		"mworker_queue_niceness":         nil,
		"maintenance_niceness":           nil,
		"event_return_niceness":          nil,
		"event_publisher_niceness":       nil,
		"reactor_niceness":               nil,
		"ipv6":                           nil,
		"tcp_master_pub_port":            4512,
		"tcp_master_pull_port":           4513,
		"tcp_master_publish_pull":        4514,
		"tcp_master_workers":             4515,
		"log_file":                       "/var/log/salt/master",
		"log_level":                      "warning",
		"log_level_logfile":              nil,
		"log_datefmt":                    "%H:%M:%S",
		"log_datefmt_logfile":            "%Y-%m-%d %H:%M:%S",
		"log_fmt_console":                "[%(levelname)-8s] %(message)s",
		"log_fmt_logfile":                "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s",
		"log_fmt_jid":                    "[JID: %(jid)s]",
		"log_granular_levels":            map[string]any{},
		"log_rotate_max_bytes":           0,
		"log_rotate_backup_count":        0,
		"pidfile":                        "/var/run/salt-master.pid",
		"publish_session":                86400,
		"range_server":                   "range:80",
		"reactor":                        []any{},
		"reactor_refresh_interval":       60,
		"reactor_worker_threads":         10,
		"reactor_worker_hwm":             10000,
		"engines":                        []any{},
		"event_return":                   "",
		"event_return_queue":             0,
		"event_return_whitelist":         []any{},
		"event_return_blacklist":         []any{},
		"event_match_type":               "startswith",
		"runner_returns":                 true,
		"serial":                         "msgpack",
		"test":                           false,
		"state_verbose":                  true,
		"state_output":                   "full",
		"state_output_diff":              false,
		"state_output_profile":           true,
		"state_auto_order":               true,
		"state_events":                   false,
		"state_aggregate":                false,
		"search":                         "",
		"loop_interval":                  60,
		"nodegroups":                     map[string]any{},
		"ssh_list_nodegroups":            map[string]any{},
		"ssh_use_home_key":               false,
		"cython_enable":                  false,
		"enable_gpu_grains":              false,
		"key_logfile":                    "/var/log/salt/key",
		"verify_env":                     true,
		"permissive_pki_access":          false,
		"key_pass":                       nil,
		"signing_key_pass":               nil,
		"default_include":                "master.d/*.conf",
		"winrepo_dir":                    "/srv/salt/win/repo",
		"winrepo_dir_ng":                 "/srv/salt/win/repo-ng",
		"winrepo_cachefile":              "winrepo.p",
		"winrepo_remotes":                []any{"https://github.com/saltstack/salt-winrepo.git"},
		"winrepo_remotes_ng":             []any{"https://github.com/saltstack/salt-winrepo-ng.git"},
		"winrepo_branch":                 "master",
		"winrepo_fallback":               "",
		"winrepo_ssl_verify":             true,
		"winrepo_user":                   "",
		"winrepo_password":               "",
		"winrepo_insecure_auth":          false,
		"winrepo_privkey":                "",
		"winrepo_pubkey":                 "",
		"winrepo_passphrase":             "",
		"winrepo_refspecs":               []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
		"syndic_wait":                    5,
		"jinja_env":                      map[string]any{},
		"jinja_sls_env":                  map[string]any{},
		"jinja_lstrip_blocks":            false,
		"jinja_trim_blocks":              false,
		"tcp_keepalive":                  true,
		"tcp_keepalive_idle":             300,
		"tcp_keepalive_cnt":              -1,
		"tcp_keepalive_intvl":            -1,
		"sign_pub_messages":              true,
		"keysize":                        2048,
		"transport":                      "zeromq",
		"gather_job_timeout":             10,
		"syndic_event_forward_timeout":   float64(0.5),
		"syndic_jid_forward_cache_hwm":   100,
		"regen_thin":                     false,
		"ssh_passwd":                     "",
		"ssh_priv_passwd":                "",
		"ssh_port":                       "22",
		"ssh_sudo":                       false,
		"ssh_sudo_user":                  "",
		"ssh_timeout":                    60,
		"ssh_user":                       "root",
		"ssh_scan_ports":                 "22",
		"ssh_scan_timeout":               float64(0.01),
		"ssh_identities_only":            false,
		"ssh_keepalive":                  true,
		"ssh_keepalive_interval":         60,
		"ssh_keepalive_count_max":        3,
		"ssh_log_file":                   "/var/log/salt/ssh",
		"ssh_config_file":                pyOsJoin(home, ".ssh", "config"),
		"cluster_mode":                   false,
		"sqlite_queue_dir":               "/var/cache/salt/master/queues",
		"queue_dirs":                     []any{},
		"cli_summary":                    false,
		"max_minions":                    0,
		"master_sign_key_name":           "master_sign",
		"master_sign_pubkey":             false,
		"master_pubkey_signature":        "master_pubkey_signature",
		"master_use_pubkey_signature":    false,
		"zmq_filtering":                  false,
		"zmq_monitor":                    false,
		"con_cache":                      false,
		"rotate_aes_key":                 true,
		"cache_sreqs":                    true,
		"dummy_pub":                      false,
		"http_connect_timeout":           float64(20.0),
		"http_request_timeout":           float64(3600.0),
		"http_max_body":                  107374182400,
		"cache":                          "localfs",
		"memcache_expire_seconds":        0,
		"memcache_max_items":             1024,
		"memcache_full_cleanup":          false,
		"memcache_debug":                 false,
		"thin_extra_mods":                "",
		"min_extra_mods":                 "",
		"ssl":                            nil,
		"extmod_whitelist":               map[string]any{},
		"extmod_blacklist":               map[string]any{},
		"clean_dynamic_modules":          true,
		"django_auth_path":               "",
		"django_auth_settings":           "",
		"allow_minion_key_revoke":        true,
		"salt_cp_chunk_size":             98304,
		"require_minion_sign_messages":   false,
		"drop_messages_signature_fail":   false,
		"discovery":                      false,
		"schedule":                       map[string]any{},
		"auth_events":                    true,
		"minion_data_cache_events":       true,
		"enable_ssh_minions":             false,
		"netapi_allow_raw_shell":         false,
		"fips_mode":                      false,
		"detect_remote_minions":          false,
		"remote_minions_port":            22,
		"pass_variable_prefix":           "",
		"pass_strict_fetch":              false,
		"pass_gnupghome":                 "",
		"pass_dir":                       "",
		"netapi_enable_clients":          []any{},
		"maintenance_interval":           3600,
		"fileserver_interval":            3600,
	}
}

// proxyDefaults returns the proxy-minion overlay applied on top of minionDefaults.
func proxyDefaults() map[string]any {
	return map[string]any{
		"conf_file":                           "/etc/salt/proxy",
		"log_file":                            "/var/log/salt/proxy",
		"add_proxymodule_to_opts":             false,
		"proxy_merge_grains_in_module":        true,
		"extension_modules":                   "/var/cache/salt/proxy/extmods",
		"append_minionid_config_dirs":         []any{"cachedir", "pidfile", "default_include", "extension_modules"},
		"default_include":                     "proxy.d/*.conf",
		"proxy_merge_pillar_in_opts":          false,
		"proxy_deep_merge_pillar_in_opts":     false,
		"proxy_merge_pillar_in_opts_strategy": "smart",
		"proxy_mines_pillar":                  true,
		"proxy_always_alive":                  true,
		"proxy_keep_alive":                    true,
		"proxy_keep_alive_interval":           1,
		"pki_dir":                             "/etc/salt/pki/proxy",
		"cachedir":                            "/var/cache/salt/proxy",
		"sock_dir":                            "/var/run/salt/proxy",
	}
}

// saltOptType reports the value types Salt 3006 accepts for the option key
// (VALID_OPTS; tuples count as lists) and whether Salt type-checks key at all.
func saltOptType(key string) (optType, bool) {
	switch key {
	case "acceptance_wait_time":
		return tFloat, true
	case "acceptance_wait_time_max":
		return tFloat, true
	case "add_proxymodule_to_opts":
		return tBool, true
	case "allow_minion_key_revoke":
		return tBool, true
	case "always_verify_signature":
		return tBool, true
	case "append_minionid_config_dirs":
		return tList, true
	case "archive_jobs":
		return tBool, true
	case "auth_events":
		return tBool, true
	case "auth_mode":
		return tInt, true
	case "auth_safemode":
		return tBool, true
	case "auth_timeout":
		return tInt, true
	case "auth_tries":
		return tInt, true
	case "auto_accept":
		return tBool, true
	case "autoload_dynamic_modules":
		return tBool, true
	case "autosign_timeout":
		return tInt, true
	case "azurefs_update_interval":
		return tInt, true
	case "backup_mode":
		return tStr, true
	case "beacons_before_connect":
		return tBool, true
	case "bootstrap_delay":
		return tInt, true
	case "cache":
		return tStr, true
	case "cache_jobs":
		return tBool, true
	case "cache_sreqs":
		return tBool, true
	case "cachedir":
		return tStr, true
	case "clean_dynamic_modules":
		return tBool, true
	case "cli_summary":
		return tBool, true
	case "client_acl_verify":
		return tBool, true
	case "cluster_mode":
		return tBool, true
	case "cmd_safe":
		return tBool, true
	case "con_cache":
		return tBool, true
	case "conf_file":
		return tStr, true
	case "cython_enable":
		return tBool, true
	case "decrypt_pillar":
		return tList, true
	case "decrypt_pillar_default":
		return tStr, true
	case "decrypt_pillar_delimiter":
		return tStr, true
	case "decrypt_pillar_renderers":
		return tList, true
	case "default_include":
		return tStr, true
	case "default_top":
		return tStr, true
	case "detect_remote_minions":
		return tBool, true
	case "disable_modules":
		return tList, true
	case "disable_returners":
		return tList, true
	case "disabled_requisites":
		return tStr | tList, true
	case "discovery":
		return tDict | tBool, true
	case "django_auth_path":
		return tStr, true
	case "django_auth_settings":
		return tStr, true
	case "drop_messages_signature_fail":
		return tBool, true
	case "eauth_acl_module":
		return tStr, true
	case "eauth_tokens":
		return tStr, true
	case "enable_fqdns_grains":
		return tBool, true
	case "enable_gpu_grains":
		return tBool, true
	case "enable_legacy_startup_events":
		return tBool, true
	case "enable_lspci":
		return tBool, true
	case "enable_ssh_minions":
		return tBool, true
	case "enable_zip_modules":
		return tBool, true
	case "engines":
		return tList, true
	case "env_order":
		return tList, true
	case "event_match_type":
		return tStr, true
	case "event_publisher_niceness":
		return tNone | tInt, true
	case "event_return":
		return tList | tStr, true
	case "event_return_blacklist":
		return tList, true
	case "event_return_niceness":
		return tNone | tInt, true
	case "event_return_queue":
		return tInt, true
	case "event_return_queue_max_seconds":
		return tInt, true
	case "event_return_whitelist":
		return tList, true
	case "ext_job_cache":
		return tStr, true
	case "ext_pillar":
		return tList, true
	case "external_auth":
		return tDict, true
	case "extmod_blacklist":
		return tDict, true
	case "extmod_whitelist":
		return tDict, true
	case "failhard":
		return tBool, true
	case "features":
		return tDict, true
	case "file_buffer_size":
		return tInt, true
	case "file_client":
		return tStr, true
	case "file_ignore_glob":
		return tList | tStr, true
	case "file_ignore_regex":
		return tList | tStr, true
	case "file_recv":
		return tBool, true
	case "file_recv_max_size":
		return tInt, true
	case "file_roots":
		return tDict, true
	case "fileserver_backend":
		return tList, true
	case "fileserver_followsymlinks":
		return tBool, true
	case "fileserver_ignoresymlinks":
		return tBool, true
	case "fileserver_interval":
		return tInt, true
	case "fileserver_update_niceness":
		return tNone | tInt, true
	case "fileserver_verify_config":
		return tBool, true
	case "fips_mode":
		return tBool, true
	case "gather_job_timeout":
		return tInt, true
	case "git_pillar_global_lock":
		return tBool, true
	case "git_pillar_includes":
		return tBool, true
	case "git_pillar_insecure_auth":
		return tBool, true
	case "git_pillar_passphrase":
		return tStr, true
	case "git_pillar_password":
		return tStr, true
	case "git_pillar_privkey":
		return tStr, true
	case "git_pillar_pubkey":
		return tStr, true
	case "git_pillar_refspecs":
		return tList, true
	case "git_pillar_ssl_verify":
		return tBool, true
	case "git_pillar_update_interval":
		return tInt, true
	case "git_pillar_user":
		return tStr, true
	case "git_pillar_verify_config":
		return tBool, true
	case "gitfs_disable_saltenv_mapping":
		return tBool, true
	case "gitfs_global_lock":
		return tBool, true
	case "gitfs_insecure_auth":
		return tBool, true
	case "gitfs_passphrase":
		return tStr, true
	case "gitfs_privkey":
		return tStr, true
	case "gitfs_pubkey":
		return tStr, true
	case "gitfs_ref_types":
		return tList, true
	case "gitfs_refspecs":
		return tList, true
	case "gitfs_remotes":
		return tList, true
	case "gitfs_saltenv":
		return tList, true
	case "gitfs_saltenv_blacklist":
		return tList, true
	case "gitfs_saltenv_whitelist":
		return tList, true
	case "gitfs_ssl_verify":
		return tBool, true
	case "gitfs_update_interval":
		return tInt, true
	case "global_state_conditions":
		return tNone | tDict, true
	case "gpg_cache":
		return tBool, true
	case "gpg_cache_backend":
		return tStr, true
	case "gpg_cache_ttl":
		return tInt, true
	case "gpg_decrypt_must_succeed":
		return tBool, true
	case "grains":
		return tDict, true
	case "grains_blacklist":
		return tList, true
	case "grains_dirs":
		return tList, true
	case "grains_refresh_every":
		return tInt, true
	case "grains_refresh_pre_exec":
		return tBool, true
	case "hash_type":
		return tStr, true
	case "hgfs_base":
		return tStr, true
	case "hgfs_branch_method":
		return tStr, true
	case "hgfs_mountpoint":
		return tStr, true
	case "hgfs_remotes":
		return tList, true
	case "hgfs_root":
		return tStr, true
	case "hgfs_saltenv_blacklist":
		return tList, true
	case "hgfs_saltenv_whitelist":
		return tList, true
	case "hgfs_update_interval":
		return tInt, true
	case "http_connect_timeout":
		return tFloat, true
	case "http_max_body":
		return tInt, true
	case "http_request_timeout":
		return tFloat, true
	case "id":
		return tStr, true
	case "id_function":
		return tDict | tStr, true
	case "interface":
		return tStr, true
	case "ipc_mode":
		return tStr, true
	case "ipc_write_buffer":
		return tInt, true
	case "ipv6":
		return tNone | tBool, true
	case "jinja_env":
		return tDict, true
	case "jinja_lstrip_blocks":
		return tBool, true
	case "jinja_sls_env":
		return tDict, true
	case "jinja_trim_blocks":
		return tBool, true
	case "job_cache":
		return tBool, true
	case "job_cache_store_endtime":
		return tBool, true
	case "keep_acl_in_token":
		return tBool, true
	case "keep_jobs":
		return tInt, true
	case "keep_jobs_seconds":
		return tInt, true
	case "key_cache":
		return tStr, true
	case "key_logfile":
		return tStr, true
	case "key_pass":
		return tNone | tStr, true
	case "keysize":
		return tInt, true
	case "local":
		return tBool, true
	case "lock_saltenv":
		return tBool, true
	case "log_datefmt":
		return tStr, true
	case "log_datefmt_logfile":
		return tStr, true
	case "log_file":
		return tStr, true
	case "log_fmt_console":
		return tStr, true
	case "log_fmt_logfile":
		return tList | tStr, true
	case "log_granular_levels":
		return tDict, true
	case "log_level":
		return tStr, true
	case "log_level_logfile":
		return tNone | tStr, true
	case "log_rotate_backup_count":
		return tInt, true
	case "log_rotate_max_bytes":
		return tInt, true
	case "loop_interval":
		return tFloat, true
	case "maintenance_interval":
		return tInt, true
	case "maintenance_niceness":
		return tNone | tInt, true
	case "master":
		return tStr | tList, true
	case "master_alive_interval":
		return tInt, true
	case "master_failback":
		return tBool, true
	case "master_failback_interval":
		return tInt, true
	case "master_finger":
		return tStr, true
	case "master_job_cache":
		return tStr, true
	case "master_port":
		return tStr | tInt, true
	case "master_pubkey_signature":
		return tStr, true
	case "master_roots":
		return tDict, true
	case "master_shuffle":
		return tBool, true
	case "master_sign_key_name":
		return tStr, true
	case "master_sign_pubkey":
		return tBool, true
	case "master_stats":
		return tBool, true
	case "master_stats_event_iter":
		return tInt, true
	case "master_tops":
		return tDict, true
	case "master_tops_first":
		return tBool, true
	case "master_tries":
		return tInt, true
	case "master_type":
		return tStr, true
	case "master_uri_format":
		return tStr, true
	case "master_use_pubkey_signature":
		return tBool, true
	case "max_event_size":
		return tInt, true
	case "max_minions":
		return tInt, true
	case "max_open_files":
		return tInt, true
	case "memcache_debug":
		return tBool, true
	case "memcache_expire_seconds":
		return tInt, true
	case "memcache_full_cleanup":
		return tBool, true
	case "memcache_max_items":
		return tInt, true
	case "min_extra_mods":
		return tStr, true
	case "mine_enabled":
		return tBool, true
	case "mine_interval":
		return tInt, true
	case "mine_return_job":
		return tBool, true
	case "minion_data_cache":
		return tBool, true
	case "minion_data_cache_events":
		return tBool, true
	case "minion_id_caching":
		return tBool, true
	case "minion_id_lowercase":
		return tBool, true
	case "minion_id_remove_domain":
		return tStr | tBool, true
	case "minion_jid_queue_hwm":
		return tInt, true
	case "minion_restart_command":
		return tList, true
	case "minion_sign_messages":
		return tBool, true
	case "minionfs_blacklist":
		return tList, true
	case "minionfs_env":
		return tStr, true
	case "minionfs_mountpoint":
		return tStr, true
	case "minionfs_update_interval":
		return tInt, true
	case "minionfs_whitelist":
		return tList, true
	case "module_dirs":
		return tList, true
	case "modules_max_memory":
		return tInt, true
	case "multifunc_ordered":
		return tBool, true
	case "multiprocessing":
		return tBool, true
	case "mworker_niceness":
		return tNone | tInt, true
	case "mworker_queue_niceness":
		return tNone | tInt, true
	case "netapi_allow_raw_shell":
		return tBool, true
	case "netapi_enable_clients":
		return tList, true
	case "no_proxy":
		return tList, true
	case "nodegroups":
		return tDict | tList, true
	case "on_demand_ext_pillar":
		return tList, true
	case "open_mode":
		return tBool, true
	case "optimization_order":
		return tList, true
	case "order_masters":
		return tBool, true
	case "outputter_dirs":
		return tList, true
	case "pass_dir":
		return tStr, true
	case "pass_gnupghome":
		return tStr, true
	case "pass_strict_fetch":
		return tBool, true
	case "pass_to_ext_pillars":
		return tStr | tList, true
	case "pass_variable_prefix":
		return tStr, true
	case "password":
		return tNone | tStr, true
	case "peer":
		return tDict, true
	case "permissive_acl":
		return tBool, true
	case "permissive_pki_access":
		return tBool, true
	case "pidfile":
		return tStr, true
	case "pillar_cache":
		return tBool, true
	case "pillar_cache_backend":
		return tStr, true
	case "pillar_cache_ttl":
		return tInt, true
	case "pillar_includes_override_sls":
		return tBool, true
	case "pillar_merge_lists":
		return tBool, true
	case "pillar_opts":
		return tBool, true
	case "pillar_roots":
		return tDict, true
	case "pillar_safe_render_error":
		return tBool, true
	case "pillar_source_merging_strategy":
		return tStr, true
	case "pillar_version":
		return tInt, true
	case "pillarenv":
		return tNone | tStr, true
	case "pillarenv_from_saltenv":
		return tBool, true
	case "ping_interval":
		return tInt, true
	case "ping_on_rotate":
		return tBool, true
	case "pki_dir":
		return tStr, true
	case "preserve_minion_cache":
		return tBool, true
	case "process_count_max":
		return tInt, true
	case "providers":
		return tDict, true
	case "proxy_always_alive":
		return tBool, true
	case "proxy_deep_merge_pillar_in_opts":
		return tBool, true
	case "proxy_host":
		return tStr, true
	case "proxy_keep_alive":
		return tBool, true
	case "proxy_keep_alive_interval":
		return tInt, true
	case "proxy_merge_grains_in_module":
		return tBool, true
	case "proxy_merge_pillar_in_opts":
		return tBool, true
	case "proxy_merge_pillar_in_opts_strategy":
		return tStr, true
	case "proxy_mines_pillar":
		return tBool, true
	case "proxy_password":
		return tStr, true
	case "proxy_port":
		return tInt, true
	case "proxy_username":
		return tStr, true
	case "pub_hwm":
		return tInt, true
	case "pub_ret":
		return tBool, true
	case "pub_server_niceness":
		return tNone | tInt, true
	case "publish_port":
		return tInt, true
	case "publish_session":
		return tInt, true
	case "publisher_acl":
		return tDict, true
	case "publisher_acl_blacklist":
		return tDict, true
	case "queue_dirs":
		return tList, true
	case "random_master":
		return tBool, true
	case "random_reauth_delay":
		return tInt, true
	case "random_startup_delay":
		return tInt, true
	case "range_server":
		return tStr, true
	case "reactor":
		return tList, true
	case "reactor_niceness":
		return tNone | tInt, true
	case "reactor_refresh_interval":
		return tInt, true
	case "reactor_worker_hwm":
		return tInt, true
	case "reactor_worker_threads":
		return tInt, true
	case "recon_default":
		return tFloat, true
	case "recon_max":
		return tFloat, true
	case "recon_randomize":
		return tBool, true
	case "rejected_retry":
		return tBool, true
	case "remote_minions_port":
		return tInt, true
	case "render_dirs":
		return tList, true
	case "renderer":
		return tStr, true
	case "renderer_blacklist":
		return tList, true
	case "renderer_whitelist":
		return tList, true
	case "req_server_niceness":
		return tNone | tInt, true
	case "require_minion_sign_messages":
		return tBool, true
	case "resolve_dns_fallback":
		return tBool, true
	case "rest_timeout":
		return tInt, true
	case "ret_port":
		return tInt, true
	case "retry_dns":
		return tFloat, true
	case "retry_dns_count":
		return tNone | tInt, true
	case "return":
		return tStr | tList, true
	case "return_retry_timer":
		return tInt, true
	case "return_retry_timer_max":
		return tInt, true
	case "return_retry_tries":
		return tInt, true
	case "returner_dirs":
		return tList, true
	case "root_dir":
		return tStr, true
	case "roots_update_interval":
		return tInt, true
	case "rotate_aes_key":
		return tBool, true
	case "runner_dirs":
		return tList, true
	case "runner_returns":
		return tBool, true
	case "s3fs_update_interval":
		return tInt, true
	case "salt_cp_chunk_size":
		return tInt, true
	case "saltenv":
		return tNone | tStr, true
	case "schedule":
		return tDict, true
	case "scheduler_before_connect":
		return tBool, true
	case "search":
		return tStr, true
	case "serial":
		return tStr, true
	case "server_id_use_crc":
		return tBool | tStr, true
	case "show_jid":
		return tBool, true
	case "show_timeout":
		return tBool, true
	case "sign_pub_messages":
		return tBool, true
	case "signing_key_pass":
		return tNone | tStr, true
	case "sls_list":
		return tList, true
	case "snapper_states":
		return tBool, true
	case "snapper_states_config":
		return tStr, true
	case "sock_dir":
		return tStr, true
	case "sock_pool_size":
		return tInt, true
	case "source_address":
		return tStr, true
	case "source_interface_name":
		return tStr, true
	case "source_publish_port":
		return tStr | tInt, true
	case "source_ret_port":
		return tStr | tInt, true
	case "sqlite_queue_dir":
		return tStr, true
	case "ssh_config_file":
		return tStr, true
	case "ssh_identities_only":
		return tBool, true
	case "ssh_keepalive":
		return tBool, true
	case "ssh_keepalive_count_max":
		return tInt, true
	case "ssh_keepalive_interval":
		return tInt, true
	case "ssh_list_nodegroups":
		return tDict, true
	case "ssh_log_file":
		return tStr, true
	case "ssh_merge_pillar":
		return tBool, true
	case "ssh_passwd":
		return tStr, true
	case "ssh_port":
		return tStr, true
	case "ssh_run_pre_flight":
		return tBool, true
	case "ssh_scan_ports":
		return tStr, true
	case "ssh_scan_timeout":
		return tFloat, true
	case "ssh_sudo":
		return tBool, true
	case "ssh_sudo_user":
		return tStr, true
	case "ssh_timeout":
		return tFloat, true
	case "ssh_use_home_key":
		return tBool, true
	case "ssh_user":
		return tStr, true
	case "ssl":
		return tDict | tBool | tNone, true
	case "startup_states":
		return tStr, true
	case "state_auto_order":
		return tBool, true
	case "state_compress_ids":
		return tBool, true
	case "state_events":
		return tBool, true
	case "state_output":
		return tStr, true
	case "state_output_diff":
		return tBool, true
	case "state_output_pct":
		return tBool, true
	case "state_output_profile":
		return tBool, true
	case "state_queue":
		return tBool, true
	case "state_top":
		return tStr, true
	case "state_top_saltenv":
		return tNone | tStr, true
	case "state_verbose":
		return tBool, true
	case "states_dirs":
		return tList, true
	case "sudo_acl":
		return tBool, true
	case "sudo_user":
		return tStr, true
	case "svnfs_branches":
		return tStr, true
	case "svnfs_mountpoint":
		return tStr, true
	case "svnfs_remotes":
		return tList, true
	case "svnfs_root":
		return tStr, true
	case "svnfs_saltenv_blacklist":
		return tList, true
	case "svnfs_saltenv_whitelist":
		return tList, true
	case "svnfs_tags":
		return tStr, true
	case "svnfs_trunk":
		return tStr, true
	case "svnfs_update_interval":
		return tInt, true
	case "syndic_event_forward_timeout":
		return tFloat, true
	case "syndic_failover":
		return tStr, true
	case "syndic_finger":
		return tStr, true
	case "syndic_forward_all_events":
		return tBool, true
	case "syndic_jid_forward_cache_hwm":
		return tInt, true
	case "syndic_master":
		return tStr | tList, true
	case "syndic_wait":
		return tInt, true
	case "tcp_authentication_retries":
		return tInt, true
	case "tcp_keepalive":
		return tBool, true
	case "tcp_keepalive_cnt":
		return tFloat, true
	case "tcp_keepalive_idle":
		return tFloat, true
	case "tcp_keepalive_intvl":
		return tFloat, true
	case "tcp_master_pub_port":
		return tInt, true
	case "tcp_master_publish_pull":
		return tInt, true
	case "tcp_master_pull_port":
		return tInt, true
	case "tcp_master_workers":
		return tInt, true
	case "tcp_pub_port":
		return tInt, true
	case "tcp_pull_port":
		return tInt, true
	case "tcp_reconnect_backoff":
		return tFloat, true
	case "test":
		return tBool, true
	case "thin_extra_mods":
		return tStr, true
	case "thorium_top":
		return tStr, true
	case "thoriumenv":
		return tNone | tStr, true
	case "token_expire":
		return tInt, true
	case "token_expire_user_override":
		return tBool | tDict, true
	case "top_file":
		return tStr, true
	case "top_file_merging_strategy":
		return tStr, true
	case "transport":
		return tStr, true
	case "unique_jid":
		return tBool, true
	case "update_restart_services":
		return tList, true
	case "update_url":
		return tBool | tStr, true
	case "use_master_when_local":
		return tBool, true
	case "user":
		return tStr, true
	case "username":
		return tNone | tStr, true
	case "utils_dirs":
		return tList, true
	case "verify_env":
		return tBool, true
	case "verify_master_pubkey_sign":
		return tBool, true
	case "whitelist_modules":
		return tList, true
	case "winrepo_cache_expire_max":
		return tInt, true
	case "winrepo_cache_expire_min":
		return tInt, true
	case "winrepo_cachefile":
		return tStr, true
	case "winrepo_dir":
		return tStr, true
	case "winrepo_dir_ng":
		return tStr, true
	case "winrepo_insecure_auth":
		return tBool, true
	case "winrepo_passphrase":
		return tStr, true
	case "winrepo_password":
		return tStr, true
	case "winrepo_privkey":
		return tStr, true
	case "winrepo_pubkey":
		return tStr, true
	case "winrepo_refspecs":
		return tList, true
	case "winrepo_remotes":
		return tList, true
	case "winrepo_remotes_ng":
		return tList, true
	case "winrepo_source_dir":
		return tStr, true
	case "winrepo_ssl_verify":
		return tBool, true
	case "winrepo_user":
		return tStr, true
	case "worker_threads":
		return tInt, true
	case "zmq_backlog":
		return tInt, true
	case "zmq_filtering":
		return tBool, true
	}
	return 0, false
}
