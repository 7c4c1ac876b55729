{#- salt/minion/<id>/start and salt/cloud/<name>/created: the minion runs
    dnsmasq.announce, which sends its mine data to the master and only then
    fires dnsmasq/reservations/refresh. (Refreshing straight away would race
    with the minion's own start-up mine.update.) A minion that is not up yet
    simply does not answer; its start event comes later. -#}
{%- if tag.startswith('salt/minion/') %}
{%-   set minion = data.get('id', tag.split('/')[2]) %}
{%- else %}
{%-   set minion = data.get('name') or tag.split('/')[2] %}
{%- endif %}
dnsmasq_announce_{{ minion }}:
  local.state.apply:
    - tgt: {{ [minion] | json }}
    - tgt_type: list
    - args:
      - mods: dnsmasq.announce
