{#- salt/netapi/hook/naas/configure: the API's webhook fired the request
    body as data['post']:
      {"devices": ["sw1", "sw2", ...], "batch": 10, "request_id": "optional"}
    The body comes from outside: only device ids made of letters, digits,
    ".", "_" and "-" are accepted, batch is a whole number from 1 to 100
    (default 10). A bad request is answered with naas/request/rejected
    {reason} and starts nothing; a good one runs the orchestration
    naas.orch.configure as a runner job (the HTTP call has already
    returned). The request id is the caller's request_id or the hook
    event's time stamp. -#}
{%- set post = data.get('post') or {} %}
{%- set devices = post.get('devices') if post is mapping else None %}
{%- set batch = post.get('batch', 10) if post is mapping else 10 %}
{%- set request = (post.get('request_id') if post is mapping else None) or data.get('_stamp', '') %}
{%- set problems = [] %}
{%- if devices is string or devices is not iterable or devices is mapping or devices | length == 0 %}
{%-   do problems.append('devices must be a non-empty list of device ids') %}
{%- else %}
{%-   for d in devices %}
{%-     if d is not string or d is not match('^[A-Za-z0-9._-]{1,64}$') %}
{%-       do problems.append('bad device id: ' ~ d) %}
{%-     endif %}
{%-   endfor %}
{%- endif %}
{%- if batch is not number or batch is sameas true or batch is sameas false or batch < 1 or batch > 100 or batch != batch | int %}
{%-   do problems.append('batch must be a whole number from 1 to 100') %}
{%- endif %}
{%- if request is not string or request is not match('^[A-Za-z0-9:._-]{1,64}$') %}
{%-   do problems.append('bad request_id') %}
{%- endif %}
{%- if problems %}
naas_rejected:
  runner.event.send:
    - args:
      - tag: naas/request/rejected
      - data:
          reason: {{ problems | join('; ') | json }}
{%- else %}
naas_configure:
  runner.state.orchestrate:
    - args:
      - mods: naas.orch.configure
      - pillar:
          naas_request:
            id: {{ request | json }}
            devices: {{ devices | unique | list | json }}
            batch: {{ batch | int }}
{%- endif %}
