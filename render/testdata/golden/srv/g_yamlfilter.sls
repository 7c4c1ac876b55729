{#- the yaml filter on strings PyYAML must quote or fold #}
{%- set tricky = ['yes', 'No', 'on', '', ' lead', 'trail ', 'a: b', 'a #c', '#x', '- dash', '-x', '*star', '&amp', '!bang', '%pct', '@at', '`tick', '"dq"', "'sq'", 'multi\nline', 'tab\there', '123', '1.5', '0755', '1e3', '2001-12-14', 'null', '~', '=', '<<', 'café', 'x,y', '[br]', '{br}', 'a?b', '?q', ':c', 'k:v', 'ünïcödé ☕', 'back\\slash', 'ctrl\x01x'] %}
{%- for t in tricky %}
t{{ loop.index }}: {{ t | yaml | json }}
{%- endfor %}
{%- set long = [] %}
{%- for i in range(30) %}{% do long.append('item-number-' ~ i) %}{% endfor %}
long_flow: {{ long | yaml | json }}
long_dict_flow: {{ {'key_a': long[:6], 'key_b': 'a long string value that goes on and on and on and on and on and on'} | yaml | json }}
long_string: {{ ('word ' * 30) | trim | yaml | json }}
long_string_block: {{ {'k': ('word ' * 30) | trim} | yaml(False) | json }}
nested_block: {{ {'b': {'y': [1, {'z': None}], 'x': []}, 'a': [[1, 2], [3]], 'e': {}} | yaml(False) | json }}
numbers: {{ [1, -2, 3.0, 1.5e20, 1e-7, 0.1, 12345678901234] | yaml | json }}
bools_nulls: {{ [true, false, None] | yaml | json }}
unsortable_keys: {{ {1: 'int', 'a': 'str'} | yaml | json }}
yaml_dquote_unicode: {{ 'café ☕' | yaml_dquote | json }}
yaml_encode_str: {{ 'multi\nline' | yaml_encode | json }}
