{#- salt/cloud/<name>/created and salt/cloud/<name>/destroyed with the
    guest's MAC addresses in data.macs (gsalt's virt runner sends them):
    give the guest its fixed address on every dnsmasq host before it boots
    (dnsmasq.cloud), or take it away. Events without MACs (salt-cloud's)
    are left to announce.sls and destroyed.sls. -#}
{%- set name = data.get('name') or tag.split('/')[2] %}
{%- set macs = data.get('macs') or [] %}
{%- if tag.endswith('/created') and macs %}
dnsmasq_cloud_reserve_{{ name }}:
  local.state.apply:
    - tgt: 'roles:dnsmasq'
    - tgt_type: grain
    - args:
      - mods: dnsmasq.cloud
      - queue: True
      - pillar:
          dnsmasq_cloud: {{ {'name': name, 'mac': macs[0], 'action': 'add'} | json }}
{%- elif tag.endswith('/destroyed') and macs %}
dnsmasq_cloud_release_{{ name }}:
  local.state.apply:
    - tgt: 'roles:dnsmasq'
    - tgt_type: grain
    - args:
      - mods: dnsmasq.cloud
      - queue: True
      - pillar:
          dnsmasq_cloud: {{ {'name': name, 'action': 'remove'} | json }}
{%- endif %}
