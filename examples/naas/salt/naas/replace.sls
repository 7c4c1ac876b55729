{#- Replace the running configuration of this NAPALM proxy minion with the
    configuration rendered from its role's template and its data model:
      salt://naas/templates/<role>.j2 with
        device  pillar naas:device  (role, hostname, addresses, ...)
        site    pillar naas:site    (domain, NTP and syslog servers, ...)
    netconfig.managed with replace: True loads the whole configuration as a
    replace candidate, compares it with the running one and commits only
    when they differ (else "Already configured.", no changes). A load,
    compare or commit error fails the state with the device's message;
    net.rollback (onfail) then restores the configuration saved before the
    commit. The state fires naas/replace (fire_event), which
    reactor/report.sls turns into naas/device/<id>/applied, unchanged or
    failed. Its name carries the request id (pillar naas_request:id). -#}
{%- set device = salt['pillar.get']('naas:device', {}) %}
{%- set site = salt['pillar.get']('naas:site', {}) %}
{%- set request = salt['pillar.get']('naas_request:id', 'manual') %}
{%- if not device.get('role') %}
naas_no_data_model:
  test.fail_without_changes:
    - name: no data model (pillar naas:device with a role) for {{ grains['id'] }}
{%- else %}
naas_replace:
  netconfig.managed:
    - name: {{ request | json }}
    - template_name: salt://naas/templates/{{ device['role'] }}.j2
    - replace: True
    - commit: True
    - context:
        device: {{ device | json }}
        site: {{ site | json }}
    - fire_event: naas/replace

naas_rollback:
  module.run:
    - net.rollback: []
    - onfail:
      - netconfig: naas_replace
{%- endif %}
