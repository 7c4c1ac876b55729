{# gsalt's jinja loader (render package) still lets imports change tpldir/tplfile: they are used before any import #}
{% set os = grains.get('os', 'none') %}
svc:
  where: {tpldir: {{ tpldir }}, slspath: {{ slspath }}, tplfile: {{ tplfile }}, sls: {{ sls }}, saltenv: {{ saltenv }}}
{%- import_yaml tpldir ~ '/defaults.yaml' as defs %}
  port: {{ defs.port }}
  users: {{ defs.users | json }}
  echo: {{ salt['test.echo']('from master') }}
  grain_via_module: {{ salt['grains.get']('os_family') }}
  pillar_seen: {{ pillar | json }}
  opts_id: {{ opts['id'] }}
{%- from 'macros.jinja' import greet with context %}
  greeting: {{ greet(os) | yaml_dquote }}
