{#- nats/configure/<device>: the NATS bridge fired a message of
    dc1.<device>.configure; its body (the device's full intended
    configuration) is data['payload']. Replace the running configuration of
    proxy minion <device> with it: NAPALM's load_replace_candidate, then a
    commit (net.load_config commits by default). An empty body does
    nothing. -#}
{%- set device = tag.split('/')[2] %}
{%- set text = data.get('payload', '') %}
{%- if device and text %}
nats_intended_replace_{{ device }}:
  local.net.load_config:
    - tgt: {{ [device] | json }}
    - tgt_type: list
    - args:
      - text: {{ text | json }}
      - replace: True
{%- endif %}
