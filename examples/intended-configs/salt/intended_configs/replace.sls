{#- Replace the running configuration of this NAPALM proxy minion with its
    intended configuration, salt://intended/<minion id>.cfg.

    netconfig.managed loads the file as a replace candidate
    (load_replace_candidate), compares it with the running configuration
    (compare_config) and commits only when there is a difference; without
    one it discards the candidate ("Already configured.", no changes). Any
    error of load, compare or commit fails the state, with the device's
    message in the comment, and the candidate is discarded.

    The state fires intended_configs/replace (fire_event); the master's
    reactor (reactor/report.sls) turns that into the intended/<id>/applied,
    unchanged or failed event.

    The file is read through the Jinja renderer like any netconfig template:
    a rendered configuration must not contain "{{", "{%" or "{#".

    Pillar intended:rollback_on_error (default True): when the replace
    fails, net.rollback restores the configuration saved before the last
    commit. NAPALM drivers whose commit is atomic (IOS with
    auto_rollback_on_error, the default; EOS sessions; Junos; IOS XR)
    already leave the device as it was; set it to False there if a failure
    before the commit (device unreachable) must not undo the previous
    commit. -#}
{%- set device = grains['id'] %}
intended_configs_replace:
  netconfig.managed:
    - name: intended_configs/replace
    - template_name: salt://intended/{{ device }}.cfg
    - replace: True
    - commit: True
    - fire_event: intended_configs/replace
{%- if salt['pillar.get']('intended:rollback_on_error', True) %}

intended_configs_rollback:
  module.run:
    - net.rollback: []
    - onfail:
      - netconfig: intended_configs_replace
{%- endif %}
