{#- The orchestration of one request (pillar naas_request: id, devices,
    batch, set by reactor/configure.sls):
      naas/request/<id>/start   {devices, batch}
      naas.replace on exactly those devices, batch at a time; a device that
      fails does not stop the others (no failhard)
      naas/request/<id>/done    every device succeeded
      naas/request/<id>/failed  at least one device failed
    Each device's outcome is reported on its own by reactor/report.sls
    (naas/device/<id>/...) as soon as it finishes. -#}
{%- set req = salt['pillar.get']('naas_request', {}) %}
{%- set id = req.get('id', '') %}
{%- set devices = req.get('devices', []) %}
{%- set batch = req.get('batch', 10) %}
naas_start:
  salt.runner:
    - name: event.send
    - tag: naas/request/{{ id }}/start
    - data:
        request: {{ id | json }}
        devices: {{ devices | json }}
        batch: {{ batch }}

naas_replace:
  salt.state:
    - tgt: {{ devices | json }}
    - tgt_type: list
    - sls: naas.replace
    - batch: {{ batch }}
    - pillar:
        naas_request:
          id: {{ id | json }}
    - require:
      - salt: naas_start

naas_done:
  salt.runner:
    - name: event.send
    - tag: naas/request/{{ id }}/done
    - data:
        request: {{ id | json }}
        devices: {{ devices | json }}
    - require:
      - salt: naas_replace

naas_failed:
  salt.runner:
    - name: event.send
    - tag: naas/request/{{ id }}/failed
    - data:
        request: {{ id | json }}
        devices: {{ devices | json }}
    - onfail:
      - salt: naas_replace
