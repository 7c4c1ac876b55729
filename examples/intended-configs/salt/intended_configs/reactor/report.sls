{#- salt/state_result/<jid>/<device>/intended_configs/replace: the replace
    state of intended_configs.replace finished on <device> (its fire_event).
    Report the outcome on the master's event bus, with what the device
    actually did:
      intended/<device>/applied    {diff, jid}   the running config changed
      intended/<device>/unchanged  {jid}         nothing to change, no commit
      intended/<device>/failed     {error, jid}  the error of the load, compare
                                                 or commit (the state rolled
                                                 the device back)
    Test runs (result None) are not reported. The minion fires the event
    with event.fire_master, so the master passes on the whole load: the
    state's return is data['data']['ret'], the device is data['id']. -#}
{%- set device = data.get('id') or tag.split('/')[3] %}
{%- set event_data = data.get('data', {}) %}
{%- set ret = event_data.get('ret', {}) %}
{%- set jid = data.get('jid', tag.split('/')[2]) %}
{%- set changes = ret.get('changes', {}) %}
{%- if ret.get('result') == True and changes.get('diff') %}
intended_report_{{ device }}:
  runner.event.send:
    - args:
      - tag: intended/{{ device }}/applied
      - data:
          device: {{ device | json }}
          jid: {{ jid | json }}
          diff: {{ changes['diff'] | json }}
{%- elif ret.get('result') == True %}
intended_report_{{ device }}:
  runner.event.send:
    - args:
      - tag: intended/{{ device }}/unchanged
      - data:
          device: {{ device | json }}
          jid: {{ jid | json }}
{%- elif ret.get('result') == False %}
intended_report_{{ device }}:
  runner.event.send:
    - args:
      - tag: intended/{{ device }}/failed
      - data:
          device: {{ device | json }}
          jid: {{ jid | json }}
          error: {{ ret.get('comment', '') | json }}
{%- endif %}
