{#- Manage the NTP servers of a NAPALM proxy minion from pillar (ntp:servers).
    Servers found on the device but absent from pillar are removed unless
    pillar ntp:remove_unlisted is false. -#}
{%- set ntp = salt['pillar.get']('ntp', {}) %}
{%- set servers = ntp.get('servers', []) %}
{%- if ntp.get('remove_unlisted', True) %}
{%-   set current = salt['ntp.servers']().get('out', []) %}
{%- else %}
{%-   set current = [] %}
{%- endif %}

ntp_servers:
  netconfig.managed:
    - template_name: salt://ntp/templates/ntp.jinja
    - debug: {{ ntp.get('debug', False) }}
    - replace: false
    - context:
        servers: {{ servers | json }}
        current: {{ current | json }}
