{#- Jinja2 builtin filters as Salt SLS use them #}
{%- set users = grains.gsalt_users %}
select_odd: {{ [1, 2, 3, 4, 5] | select('odd') | list }}
reject_odd: {{ [1, 2, 3, 4, 5] | reject('odd') | list }}
select_truthy: {{ [0, 1, '', 'a', None] | select | list }}
selectattr: {{ users | selectattr('admin', 'defined') | map(attribute='name') | list }}
selectattr_true: {{ users[:2] | selectattr('admin') | map(attribute='name') | list }}
selectattr_eq: {{ users | selectattr('name', 'equalto', 'alice') | map(attribute='uid') | list }}
rejectattr: {{ users[:2] | rejectattr('admin') | map(attribute='name') | list }}
map_filter: {{ ['a', 'b'] | map('upper') | list }}
map_attr_default: {{ users | map(attribute='admin', default='n/a') | list }}
sort: {{ [3, 1, 2] | sort }}
sort_reverse: {{ [3, 1, 2] | sort(reverse=true) }}
sort_attr: {{ users | sort(attribute='uid') | map(attribute='name') | list }}
sort_strings: {{ ['b', 'C', 'a'] | sort }}
join_attr: {{ users | join(', ', attribute='name') }}
first_last: [{{ [1, 2, 3] | first }}, {{ [1, 2, 3] | last }}, {{ 'abc' | first }}]
sum: [{{ [1, 2, 3] | sum }}, {{ users | sum(attribute='uid') }}]
int_float: [{{ '42' | int }}, {{ 'x' | int }}, {{ 'x' | int(7) }}, {{ '3.9' | int }}, {{ '1.5' | float }}, {{ 3 | float }}, {{ '0x1A' | int(0, 16) }}]
string: {{ 42 | string ~ '!' }}
list_str: {{ 'abc' | list }}
list_dict: {{ {'x': 1, 'y': 2} | list }}
reverse: [{{ 'abc' | reverse }}, {{ [1, 2, 3] | reverse | list }}]
length_dict: {{ {'a': 1} | length }}
capitalize_title: [{{ 'hello world' | capitalize }}, {{ 'hello world' | title }}]
trim: "{{ '  padded  ' | trim }}"
center: "{{ 'ab' | center(6) }}"
wordcount: {{ 'one two three' | wordcount }}
truncate: "{{ 'a very long sentence indeed' | truncate(12) }}"
round: [{{ 2.567 | round(1) }}, {{ 2.5 | round }}, {{ 2.567 | round(2, 'floor') }}]
abs: {{ -5 | abs }}
replace_count: {{ 'aaa' | replace('a', 'b', 2) }}
indent: {{ "line1\nline2\nline3" | indent(4) | json }}
indent_first: {{ "line1\nline2" | indent(2, true) | json }}
batch: {{ [1, 2, 3, 4, 5] | batch(2) | list }}
items_filter: {{ {'k': 'v', 'a': 'b'} | items | list | string | json }}
dictsort_builtin: {{ {'b': 1, 'a': 2} | dictsort | string | json }}
items_loop: [{% for k, v in {'k': 'v', 'a': 'b'} | dictsort %}{{ k }}{{ v }}, {% endfor %}]
groupby: [{% for g in users[:2] | groupby('admin') %}{{ g.grouper }}:{{ g.list | map(attribute='name') | join('+') }} {% endfor %}]
min_attr: {{ [3, 5, 1] | min }}
unique_builtin: {{ ['A', 'a', 'b'] | unique }}
tojson_builtin: {{ [1, 'two'] | tojson | json }}
urlencode: {{ 'a b&c' | urlencode }}
wordwrap: {{ 'aaa bbb ccc' | wordwrap(7) | json }}
filesizeformat: {{ 1000000 | filesizeformat }}
striptags: {{ '<b>bold</b> text' | striptags }}
escape: "{{ '<x>' | e }}"
