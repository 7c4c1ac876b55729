{#- Run on the dnsmasq host (reactor/refresh.sls): one reservation per
    minion in the mine, "<ip> <id>" in the addn-hosts file (DNS) and
    "<id>,<ip>" in the dhcp-hostsfile (DHCP by host name), then SIGHUP so
    dnsmasq re-reads both. Settings: dnsmasq_reservations in the minion
    config or pillar (minion.d/dnsmasq-host.conf); dnsmasq_exclude (pillar,
    set by the reactor) lists minions to leave out. -#}
{%- set cfg = salt['config.get']('dnsmasq_reservations', {}) %}
{%- set exclude = salt['pillar.get']('dnsmasq_exclude', []) %}
{%- set mine = salt['mine.get'](cfg.get('target', '*'), cfg.get('mine_function', 'network.ip_addrs'), cfg.get('target_type', 'glob')) %}
{%- set reservations = [] %}
{%- for id, addrs in mine | dictsort %}
{%-   if id not in exclude and addrs is iterable and addrs is not string and addrs is not mapping and addrs %}
{%-     do reservations.append([id, addrs[0]]) %}
{%-   endif %}
{%- endfor %}

dnsmasq-reservations-addn-hosts:
  file.managed:
    - name: {{ cfg.get('addn_hosts', '/etc/dnsmasq.reservations.hosts') }}
    - source: salt://dnsmasq/files/addn-hosts.jinja
    - template: jinja
    - mode: '0644'
    - makedirs: True
    - context:
        reservations: {{ reservations | json }}

dnsmasq-reservations-dhcp-hosts:
  file.managed:
    - name: {{ cfg.get('dhcp_hostsfile', '/etc/dnsmasq.reservations.dhcp') }}
    - source: salt://dnsmasq/files/dhcp-hosts.jinja
    - template: jinja
    - mode: '0644'
    - makedirs: True
    - context:
        reservations: {{ reservations | json }}

dnsmasq-reservations-reload:
  cmd.run:
    - name: kill -HUP "$(cat {{ cfg.get('pid_file', '/run/dnsmasq/dnsmasq.pid') }})"
    - onchanges:
      - file: dnsmasq-reservations-addn-hosts
      - file: dnsmasq-reservations-dhcp-hosts
