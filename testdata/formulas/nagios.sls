# nagios-formula's pillar.example (saltstack-formulas/nagios-formula at the
# commit of testdata/formulas.txt) with its two nagios:checks keys made one
# (the second's check_example_com_http moved under the first): Salt 3006's
# YAML loader refuses the duplicate key ("found conflicting ID 'checks'"),
# so it cannot render the example itself.
nagios:
  cgi:
    show_context_help: 1
    use_pending_states: 1
    nagios_check_command: /usr/lib/nagios/plugins/check_nagios /var/cache/nagios3/status.dat 5 '/usr/sbin/nagios3'
    use_authentication: 1
    use_ssl_authentication: 0
    authorized_for_system_information: nagiosadmin
    authorized_for_configuration_information: nagiosadmin
    authorized_for_system_commands: nagiosadmin
    authorized_for_all_services: nagiosadmin
    authorized_for_all_hosts: nagiosadmin
    authorized_for_all_service_commands: nagiosadmin
    authorized_for_all_host_commands: nagiosadmin
    default_statusmap_layout: 5
    default_statuswrl_layout: 4
    ping_syntax: /bin/ping -n -U -c 5 $HOSTADDRESS$
    refresh_rate: 90
    result_limit: 100
    escape_html_tags: 1
    action_url_target: _blank
    notes_url_target: _blank
    lock_author_names: 1
  server:
    cfg_file:
      - /etc/nagios3/commands.cfg
    cfg_dir:
      - /etc/nagios-plugins/config
      - /etc/nagios3/conf.d/
    status_update_interval: 10
    check_external_commands: 0
    external_command_buffer_slots: 4096
    event_broker_options: -1
    log_rotation_method: d
    use_syslog: 1
    log_notifications: 1
    log_service_retries: 1
    log_host_retries: 1
    log_event_handlers: 1
    log_initial_states: 0
    log_external_commands: 0
    log_passive_checks: 1
    service_inter_check_delay_method: s
    max_service_check_spread: 30
    service_interleave_factor: s
    host_inter_check_delay_method: s
    max_host_check_spread: 30
    max_concurrent_checks: 0
    check_result_reaper_frequency: 10
    max_check_result_reaper_time: 30
    max_check_result_file_age: 3600
    cached_host_check_horizon: 15
    cached_service_check_horizon: 15
    enable_predictive_host_dependency_checks: 1
    enable_predictive_service_dependency_checks: 1
    soft_state_dependencies: 0
    auto_reschedule_checks: 0
    auto_rescheduling_interval: 30
    auto_rescheduling_window: 180
    sleep_time: 0.25
    service_check_timeout: 60
    host_check_timeout: 30
    event_handler_timeout: 30
    notification_timeout: 30
    ocsp_timeout: 5
    # This option allows you to specify a command to be run after every service check, which can be useful in distributed monitoring.
    # ocsp_command: obsessive_service_handler
    perfdata_timeout: 5
    retain_state_information: 1
    retention_update_interval: 60
    use_retained_program_state: 1
    use_retained_scheduling_info: 1
    retained_host_attribute_mask: 0
    retained_service_attribute_mask: 0
    retained_process_host_attribute_mask: 0
    retained_process_service_attribute_mask: 0
    retained_contact_host_attribute_mask: 0
    retained_contact_service_attribute_mask: 0
    interval_length: 60
    check_for_updates: 1
    bare_update_check: 0
    use_aggressive_host_checking: 0
    execute_service_checks: 1
    accept_passive_service_checks: 1
    execute_host_checks: 1
    accept_passive_host_checks: 1
    enable_notifications: 1
    enable_event_handlers: 1
    process_performance_data: 0
    obsess_over_services: 0
    obsess_over_hosts: 0
    translate_passive_host_checks: 0
    passive_host_checks_are_soft: 0
    check_for_orphaned_services: 1
    check_for_orphaned_hosts: 1
    check_service_freshness: 1
    service_freshness_check_interval: 60
    service_check_timeout_state: c
    check_host_freshness: 0
    host_freshness_check_interval: 60
    additional_freshness_latency: 15
    enable_flap_detection: 1
    low_service_flap_threshold: 5.0
    high_service_flap_threshold: 20.0
    low_host_flap_threshold: 5.0
    high_host_flap_threshold: 20.0
    date_format: iso8601
    enable_embedded_perl: 1
    use_embedded_perl_implicitly: 1
    illegal_object_name_chars: "`~!$%^&*|'\"<>?,():"
    illegal_macro_output_chars: "`~$&|'\"<>"
    use_regexp_matching: 0
    use_true_regexp_matching: 0
    admin_email: root@localhost
    admin_pager: pageroot@localhost
    daemon_dumps_core: 0
    use_large_installation_tweaks: 0
    enable_environment_macros: 1
    debug_level: 0
    debug_verbosity: 1
    max_debug_file_size: 1000000
  nrpe:
    server_address: 127.0.0.1
    server_port: 5666
    pid_file: /var/run/nagios/nrpe.pid
    allowed_hosts:
      - 127.0.0.1
      - 192.168.0.1
    command_timeout: 60
    connection_timeout: 300
    dont_blame_nrpe: 0
    allow_bash_command_substitution: 0
    nrpe_commands:
      - command[check_users]=/usr/lib/nagios/plugins/check_users -w 5 -c 10
      - command[check_load]=/usr/lib/nagios/plugins/check_load -w 15,10,5 -c 30,25,20
      - command[check_hda1]=/usr/lib/nagios/plugins/check_disk -w 20% -c 10% -p /dev/sda1
      - command[check_zombie_procs]=/usr/lib/nagios/plugins/check_procs -w 5 -c 10 -s Z
      - command[check_total_procs]=/usr/lib/nagios/plugins/check_procs -w 150 -c 200
  nsca:
    client:
      password: s3crIt
      encryption_method: 1
      user: root
      group: root
      mode: 0600
  plugins:
    extra_pkgs:
      - nagios-plugins-contrib
  lookup:
    nagios:
      plugins: nagios-plugins
      server: nagios3
      service: nagios3
      # enabled: Start and add to autostart
      # disabled: Remove from autostart, but ignore if running or not
      # dead: Stop and remove from autostart
      service_status: enabled
      dynamic_cfg_dir: /etc/nagios3/dynamic/
      macro_users:
        USER3: "'s3crIt'"
    nrpe:
      cfg_dir: /etc/nagios/nrpe.d/
      group: nagios
      plugin: nagios-nrpe-plugin
      plugin_dir: /usr/lib/nagios/plugins/
      server: nagios-nrpe
      service: nrpe
      user: nagios
      cmd_mode: 644  # nagios.nrpe.dynamic - /etc/nagios/nrpe.d/* files modes
      install_recommends: False # This will only work in Debian Family systems. See https://github.com/saltstack-formulas/nagios-formula/issues/23


# This pillar data targetted at minion(s) and at the Nagios host, both.
  checks:
    check_procs_ldap:
      #decommissioned: True  # Optional indication that the check should be _removed_ from a minion
      plugin:
        plugin_file: check_procs
        #plugin_source: 'salt://ldap/files/check_procs  # optional
        plugin_args: '-c 1:1 -C slapd'
      service:
        description: "slapd process check"
        template: "critical-service" # default to limited-notification-service
        hostgroups:
          - com.example.ldap  # list of applicable nagios hostgroups
          - com.example       # e.g. for a core check
        hostnames:
          - sololdap.example.com
    check_example_com_http:  # Example of a remote (read: non-NRPE) check.
      plugin:
        command_name: 'check_http'  # defaults to check_nrpe; this is to run local check
        command_args: '-w 30 -c 60 -H $HOSTADDRESS$ -u /index.html'
      service:
        description: "example.com external http check"
        template: "limited-notification-service"
        hostnames:
          - example.com # If a pseudohost, *MUST* be defined above. Does not result in a host definition.

# This pillar data tree would _only_ be targetted at the Nagios server.
  pseudohosts:  # You can statically define Nagios hosts (read: non-LDAP) hosts here.
    admin.example.com:
      parent: example.com
    example.com: ~
