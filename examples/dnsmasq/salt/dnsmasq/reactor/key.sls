{#- salt/key: a deleted or rejected key takes the minion out of mine.get;
    rewrite the reservations without it. -#}
{%- if data.get('act') in ['delete', 'reject'] and data.get('id') %}
dnsmasq_reservations_without_{{ data['id'] }}:
  local.state.apply:
    - tgt: 'roles:dnsmasq'
    - tgt_type: grain
    - args:
      - mods: dnsmasq.reservations
      - queue: True
      - pillar:
          dnsmasq_exclude: {{ [data['id']] | json }}
{%- endif %}
