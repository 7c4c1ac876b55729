{#- Run on the dnsmasq host (reactor/cloud.sls) when a virt guest is created
    or destroyed (salt/cloud/<name>/created|destroyed, fired by the virt
    runner with the guest's MAC addresses). Pillar dnsmasq_cloud: {name,
    mac, action: add|remove}. A guest gets a fixed address before it ever
    boots: one file per guest in a --hostsdir ("<ip> <name>", DNS) and in a
    --dhcp-hostsdir ("<mac>,<ip>,<name>", DHCP by MAC). The address is the
    one the guest already has, else the first free one of
    <cloud_net>.<cloud_first> .. <cloud_net>.<cloud_last>. Settings:
    dnsmasq_reservations in the minion config or pillar. -#}
{%- set cfg = salt['config.get']('dnsmasq_reservations', {}) %}
{%- set cloud = salt['pillar.get']('dnsmasq_cloud', {}) %}
{%- set name = cloud.get('name', '') | string %}
{%- set hostsdir = cfg.get('cloud_hostsdir', '/etc/dnsmasq.cloud.hosts.d') %}
{%- set dhcpdir = cfg.get('cloud_dhcp_hostsdir', '/etc/dnsmasq.cloud.dhcp.d') %}
{%- set net = cfg.get('cloud_net', '10.20.1') %}
{%- set first = cfg.get('cloud_first', 10) | int %}
{%- set last = cfg.get('cloud_last', 250) | int %}
{%- set pid_file = cfg.get('pid_file', '/run/dnsmasq/dnsmasq.pid') %}
{%- set valid = name and '/' not in name and not name.startswith('.') %}

{%- if valid and cloud.get('action') == 'add' and cloud.get('mac') %}
{%-   set used = [] %}
{%-   set mine = [] %}
{%-   if salt['file.directory_exists'](hostsdir) %}
{%-     for f in salt['file.readdir'](hostsdir) %}
{%-       if f not in ['.', '..'] %}
{%-         set words = salt['file.read'](hostsdir ~ '/' ~ f).split() %}
{%-         if words and f == name %}
{%-           do mine.append(words[0]) %}
{%-         elif words %}
{%-           do used.append(words[0]) %}
{%-         endif %}
{%-       endif %}
{%-     endfor %}
{%-   endif %}
{%-   set free = [] %}
{%-   for n in range(first, last + 1) %}
{%-     if (net ~ '.' ~ n) not in used %}
{%-       do free.append(net ~ '.' ~ n) %}
{%-     endif %}
{%-   endfor %}
{%-   set addr = mine[0] if mine else (free[0] if free else '') %}
{%-   if addr %}

dnsmasq-cloud-dns-{{ name }}:
  file.managed:
    - name: {{ (hostsdir ~ '/' ~ name) | json }}
    - contents: {{ (addr ~ ' ' ~ name) | json }}
    - mode: '0644'
    - makedirs: True

dnsmasq-cloud-dhcp-{{ name }}:
  file.managed:
    - name: {{ (dhcpdir ~ '/' ~ name) | json }}
    - contents: {{ (cloud['mac'] ~ ',' ~ addr ~ ',' ~ name) | json }}
    - mode: '0644'
    - makedirs: True

dnsmasq-cloud-reload-{{ name }}:
  cmd.run:
    - name: kill -HUP "$(cat {{ pid_file }})"
    - onchanges:
      - file: dnsmasq-cloud-dns-{{ name }}
      - file: dnsmasq-cloud-dhcp-{{ name }}
{%-   else %}

dnsmasq-cloud-no-address-{{ name }}:
  test.fail_without_changes:
    - name: {{ ('no free address in ' ~ net ~ '.' ~ first ~ '-' ~ last ~ ' for ' ~ name) | json }}
{%-   endif %}

{%- elif valid and cloud.get('action') == 'remove' %}

dnsmasq-cloud-dns-{{ name }}:
  file.absent:
    - name: {{ (hostsdir ~ '/' ~ name) | json }}

dnsmasq-cloud-dhcp-{{ name }}:
  file.absent:
    - name: {{ (dhcpdir ~ '/' ~ name) | json }}

{#- dnsmasq forgets a removed dhcp-hostsdir entry only on SIGHUP. #}
dnsmasq-cloud-reload-{{ name }}:
  cmd.run:
    - name: kill -HUP "$(cat {{ pid_file }})"
    - onchanges:
      - file: dnsmasq-cloud-dns-{{ name }}
      - file: dnsmasq-cloud-dhcp-{{ name }}
{%- endif %}
