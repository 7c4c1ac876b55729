{#- salt/state_result/<jid>/<device>/naas/replace: the replace state of
    naas.replace finished on <device>. Report what the device did:
      naas/device/<device>/applied    {request, jid, diff}
      naas/device/<device>/unchanged  {request, jid}
      naas/device/<device>/failed     {request, jid, error}  (rolled back)
    Test runs (result None) are not reported. The minion fires the event
    with event.fire_master: the state's return is data['data']['ret'], the
    device data['id'], the request id the state's name. -#}
{%- set device = data.get('id') or tag.split('/')[3] %}
{%- set ret = data.get('data', {}).get('ret', {}) %}
{%- set jid = data.get('jid', tag.split('/')[2]) %}
{%- set request = ret.get('name', '') %}
{%- set changes = ret.get('changes', {}) %}
{%- set outcome = none %}
{%- if ret.get('result') == True and changes.get('diff') %}
{%-   set outcome = 'applied' %}
{%- elif ret.get('result') == True %}
{%-   set outcome = 'unchanged' %}
{%- elif ret.get('result') == False %}
{%-   set outcome = 'failed' %}
{%- endif %}
{%- if outcome %}
naas_report_{{ device }}:
  runner.event.send:
    - args:
      - tag: naas/device/{{ device }}/{{ outcome }}
      - data:
          device: {{ device | json }}
          request: {{ request | json }}
          jid: {{ jid | json }}
{%-   if outcome == 'applied' %}
          diff: {{ changes['diff'] | json }}
{%-   elif outcome == 'failed' %}
          error: {{ ret.get('comment', '') | json }}
{%-   endif %}
{%- endif %}
