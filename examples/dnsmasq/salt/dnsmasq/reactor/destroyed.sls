{#- salt/cloud/<name>/destroyed: the VM is gone. Delete its key (the master
    then drops its mine data, so later refreshes leave it out; salt-cloud
    removes the key too, but only after this event) and rewrite the
    reservations without it right away. -#}
{%- set minion = data.get('name') or tag.split('/')[2] %}
dnsmasq_forget_key_{{ minion }}:
  wheel.key.delete:
    - match: {{ minion | json }}

dnsmasq_reservations_without_{{ minion }}:
  local.state.apply:
    - tgt: 'roles:dnsmasq'
    - tgt_type: grain
    - args:
      - mods: dnsmasq.reservations
      - queue: True
      - pillar:
          dnsmasq_exclude: {{ [minion] | json }}
