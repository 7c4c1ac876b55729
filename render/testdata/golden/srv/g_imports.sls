{%- from 'lib/map.jinja' import web, port_line, map_tpldir, map_tplfile with context %}
{%- import 'lib/macros.jinja' as m %}
{%- from 'lib/macros.jinja' import greet %}
{%- import 'lib/map.jinja' as mapmod %}
{%- import_yaml 'lib/defaults.yaml' as yaml_defaults %}
{%- import_json 'lib/defaults.json' as json_defaults %}
{%- import_text 'lib/notes.txt' as notes %}
{%- load_yaml as loaded_yaml %}
key: {{ grains.os }}
list: [1, two, 3.0]
{%- endload %}
{%- load_json as loaded_json %}
{"j": [1, "{{ grains.os_family }}"]}
{%- endload %}
{%- load_text as loaded_text %}
some {{ grains.os }} text
{%- endload %}
web: {{ web }}
web_pkg: {{ web.pkg }}
port_line: {{ port_line(web.port) }}
map_tpl: [{{ map_tpldir }}, {{ map_tplfile }}]
module_attr: {{ mapmod.web.service }}
module_str: {{ mapmod | string | trim }}
{{ m.pkg_state('vim', version='2:8.2') }}
{{ m.pkg_state('git', extra=['refresh: True']) }}
greet: {{ greet() }} / {{ greet('salt') }} / {{ m.greet(who='you') }}
uses_grains: {{ m.uses_grains() }}
yaml_defaults: {{ yaml_defaults }}
json_defaults: {{ json_defaults }}
notes: {{ notes | json }}
loaded_yaml: {{ loaded_yaml }}
loaded_json: {{ loaded_json }}
loaded_text: {{ loaded_text | json }}
{%- set local_var = 'local!' %}
{% include 'lib/include_me.sls' %}
{% include 'lib/missing.sls' ignore missing %}
after_include: {{ tpldir }}|{{ tplfile }}
call_block: "{% call greet("caller") %} + called{% endcall %}"
