{#- a template's salt['fun'](...) passes "name=value" strings as they
    are, with no job-style kwarg parsing (openldap-formula's
    pillar.get('openldap:rootdn', 'cn=Manager,' + base)) #}
{%- set base = 'dc=example,dc=com' %}
echo_with_equals:
  test.nop:
    - text: {{ salt['test.echo']('cn=Manager,' + base) | json }}
arg_with_equals:
  test.nop:
    - got: {{ salt['test.arg']('a=b', 'x', c='d=e') | json }}
