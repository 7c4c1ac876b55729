{#- Jinja2 features and Python semantics gonja lacked (render/jinja) -#}
{%- set state = {True: 'running', False: 'dead'} %}
{%- set ports = {80: 'http', 443: 'https',} %}
{%- macro m(a, b, c=3) -%}{{ a }}{{ b }}{{ c }}{{ kwargs }}{%- endmacro %}
{%- set args = [1, 2] %}
{%- set kw = {'c': 9, 'z': 0} %}
trailing_commas: "{{ [1, 2,] }} {{ dict(a=1,) }}"
newline_and: {{ 'yes' if grains.get('os') and
                 grains.get('id', 'x') or
                 false else 'no' }}
star_kwargs: "{{ m(*args, **kw) }}"
cond_no_else: "[{{ 'x' if false }}]"
bool_keys: "{{ state[true] }} {{ state[false] }}"
int_keys: "{{ ports[80] }} {{ ports.get(443) }} {% for p in ports|sort %}{{ p + 1 }} {% endfor %}"
empty_dict_false: "{% if {} %}full{% else %}empty{% endif %}"
neg_index: "{{ ['x', 'y'][-1] }} {{ 'abc'[::-1] }}"
big_int: "{{ 2 ** 100 }} {{ 100000000000000000000 // 3 }}"
kwargs_order: "{{ dict(zeta=1, alpha=2) }}"
varargs_tuple: "{%- macro v() -%}{{ varargs }}{%- endmacro -%}{{ v(1, 2) }}"
percent: "{{ '%s=%05.1f' % ('x', 3.14159) }} {{ '%(a)s' % {'a': 1} }}"
str_format: "{{ '{0}-{1:>3}'.format('a', 7) }}"
floor_mod: "{{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 6 / 3 }}"
chained: "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}"
loop_vars: "{% for i in 'abc' %}{{ loop.revindex }}{{ loop.cycle('-', '+') }}{% endfor %}"
loop_filter_else: "{% for i in [1, 2] if i > 5 %}{{ i }}{% else %}none{% endfor %}"
ns: "{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"
unpack: "{% set k, v = 'a=b'.split('=') %}{{ k }}{{ v }}"
methods: "{{ 'a,b'.split(',') }} {{ '  x '.strip() }} {{ 'abc'.startswith(('x', 'a')) }} {{ 'a b'.title() }}"
printing: "{{ none }} {{ [none, true, 1.0, 'q'] }} {{ (1,) }} {{ 1e16 }} {{ 0.1 + 0.2 }}"
list_alias: "{% set l = [] %}{% for i in range(3) %}{% do l.append(i) %}{% endfor %}{{ l }}"
dict_update: "{% set d = {'a': 1} %}{% do d.update(b=2) %}{% do d.setdefault('c', 3) %}{{ d }}"
regex: "{{ 'foobar' | regex_match('(foo)(?=bar)') }} {{ 'aXbXc' | regex_replace('(?<=a)X', '-') }}"
select: "{{ range(10) | select('odd') | map('string') | join(',') }}"
