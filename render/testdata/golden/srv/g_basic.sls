{#- core Jinja features with Salt's context #}
{%- set roles = grains['gsalt_roles'] %}
os: {{ grains.os }}
os_bracket: {{ grains['os_family'] }}
num_plus: {{ grains.gsalt_num + 1 }}
float_mul: {{ grains.gsalt_float * 2 }}
none_printed: {{ grains.gsalt_none }}
none_quoted: "{{ grains.gsalt_none }}"
bool_printed: {{ grains.gsalt_bool }}
list_printed: "{{ roles }}"
dict_printed: "{{ grains.gsalt_nested }}"
str_upper: {{ grains.gsalt_str | upper }}
str_lower: {{ grains.gsalt_str.lower() }}
str_replace: {{ grains.gsalt_str.replace('World', 'Salt') }}
str_split: {{ grains.gsalt_str.split() | join('-') }}
str_startswith: {{ grains.gsalt_str.startswith('Hello') }}
str_format: "{{ '{}-{}'.format('a', 'b') }}"
percent_format: "{{ '%s has %d roles' % (grains.os, roles|length) }}"
percent_dict: "{{ '%(a)s/%(b)s' % {'a': 1, 'b': 'x'} }}"
format_filter: "{{ '%s:%s' | format('host', 80) }}"
tilde: {{ grains.os ~ '-' ~ grains.gsalt_num }}
math: [{{ 7 // 2 }}, {{ -7 // 2 }}, {{ 7 % 3 }}, {{ -7 % 3 }}, {{ 2 ** 10 }}, {{ 10 / 4 }}, {{ 7.5 // 2 }}]
cmp: [{{ 1 < 2 }}, {{ 'a' < 'b' }}, {{ 2 == 2.0 }}, {{ 1 != 1 }}]
in_list: {{ 'web' in roles }}
in_dict: {{ 'os' in grains }}
not_in: {{ 'x' not in roles }}
in_str: {{ 'World' in grains.gsalt_str }}
is_defined: [{{ grains.nope is defined }}, {{ grains.os is defined }}, {{ undefined_var is defined }}, {{ grains.gsalt_none is defined }}]
is_none: [{{ grains.gsalt_none is none }}, {{ grains.os is none }}]
is_tests: [{{ roles is sequence }}, {{ grains.gsalt_nested is mapping }}, {{ grains.os is string }}, {{ 3 is number }}, {{ 4 is even }}, {{ 3 is odd }}, {{ 9 is divisibleby 3 }}]
default_missing: {{ grains.nope | default('dflt') }}
default_none: "{{ grains.gsalt_none | default('dflt') }}"
default_bool: {{ '' | default('empty', true) }}
d_alias: {{ pillar.nope | d('dd') }}
pillar_get: {{ salt['pillar.get']('app:name') }}
pillar_get_default: {{ salt['pillar.get']('app:missing', 'fallback') }}
pillar_get_attr: {{ salt.pillar.get('app:port') }}
grains_get: {{ salt['grains.get']('gsalt_nested:a:b') }}
test_echo: {{ salt['test.echo']('echoed') }}
dict_get: {{ pillar.app.get('name') }}
dict_get_default: {{ pillar.app.get('nope', 'dg') }}
keys: {{ pillar.app.settings.keys() | list }}
values: {{ pillar.app.settings.values() | list }}
items:
{%- for k, v in pillar.app.settings.items() %}
  - {{ k }}={{ v }}
{%- endfor %}
iter_order: [{% for k in grains.gsalt_nested %}{{ k }}{% if not loop.last %}, {% endif %}{% endfor %}]
loop_vars:
{%- for r in roles %}
  - {index: {{ loop.index }}, index0: {{ loop.index0 }}, first: {{ loop.first }}, last: {{ loop.last }}, length: {{ loop.length }}, revindex: {{ loop.revindex }}}
{%- endfor %}
{%- set acc = [] %}
{%- for r in roles %}
{%- do acc.append(r ~ '!') %}
{%- endfor %}
appended: {{ acc }}
{%- set d = {'first': 1} %}
{%- do d.update({'second': 2}) %}
{%- do d.update(third=3) %}
{%- set _ = d.setdefault('fourth', 4) %}
updated: {{ d }}
dict_literal_order: {{ {'z': 1, 'a': 2, 'm': 3} }}
{%- set ns = namespace(total=0) %}
{%- for u in grains.gsalt_users %}
{%- set ns.total = ns.total + u.uid %}
{%- endfor %}
namespace_total: {{ ns.total }}
{%- set counter = 0 %}
{%- for r in roles %}{% set counter = counter + 1 %}{% endfor %}
scoped_counter: {{ counter }}
if_elif: {% if grains.gsalt_num > 5 %}big{% elif grains.gsalt_num > 2 %}medium{% else %}small{% endif %}
inline_if: {{ 'yes-it-is' if grains.gsalt_bool else 'no' }}
inline_if_else_none: "{{ 'x' if false }}"
for_else: {% for x in [] %}{{ x }}{% else %}empty{% endfor %}
for_filter: [{% for u in grains.gsalt_users if u.admin is defined and u.admin %}{{ u.name }}{% endfor %}]
nested_index: {{ grains.gsalt_nested['a']['list'][1] }}
neg_index: {{ roles[-1] }}
slice: {{ roles[0:1] }}
str_slice: {{ grains.gsalt_str[:5] }}
length: [{{ roles | length }}, {{ grains.gsalt_str | length }}, {{ grains.gsalt_nested | length }}, {{ roles | count }}]
range: {{ range(3) | list }}
range_step: {{ range(10, 0, -3) | list }}
sls_vars: ["{{ sls }}", "{{ slspath }}", "{{ sls_path }}", "{{ slsdotpath }}", "{{ slscolonpath }}", "{{ tpldir }}", "{{ tplfile }}", "{{ tpldot }}", "{{ tplpath }}"]
saltenv: {{ saltenv }}
opts_id: {{ opts.id }}
whitespace_control: "a  {{- 'b' -}}  c"
raw: "{% raw %}{{ not_rendered }}{% endraw %}"
{%- set block_var %}captured {{ grains.os }}{% endset %}
block_set: {{ block_var }}
{%- with w = 'with-value' %}
with_block: {{ w }}
{%- endwith %}
{%- filter upper %}
filter_block: shouted
{%- endfilter %}
joined_attr: {{ grains.gsalt_users | map(attribute='name') | join(',') }}
