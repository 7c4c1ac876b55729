{#- pillar data through templates (nothing that prints or dumps a dict:
    masterless Salt has OrderedDicts here, a minion of a master plain dicts) #}
{%- set app = salt['pillar.get']('app', {}) %}
name: {{ app.name }}
port_plus: {{ app.port + 1 }}
enabled: {{ app.enabled }}
tags: {{ app.tags | join(',') }}
settings_json: {{ pillar.app.settings | json | json }}
settings_items: [{% for k, v in pillar.app.settings.items() %}"{{ k }}={{ v }}"{{ ', ' if not loop.last }}{% endfor %}]
empty: "{{ pillar.empty_value }}"
empty_is_none: {{ pillar.empty_value is none }}
ports_items: [{% for p, proto in pillar.ports.items() %}{{ p + 0 }}{{ ', ' if not loop.last }}{% endfor %}]
ports_get: {{ pillar.ports.get(443) }}
ports_json: {{ pillar.ports | json | json }}
{%- for pkg in pillar.pkgs %}
install_{{ pkg }}:
  pkg.installed:
    - name: {{ pkg }}
{%- if pkg == 'nginx' %}
    - require_in:
      - service: nginx
{%- endif %}
{%- endfor %}
merged: {{ pillar.app.settings | dictsort | map('last') | list }}
