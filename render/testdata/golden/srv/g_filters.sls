{#- Salt's own filters #}
{%- set data = {'b': [1, 2], 'a': 'x', 'c': {'y': None, 'n': true}} %}
yaml_flow: {{ data | yaml | json }}
yaml_block: {{ data | yaml(False) | json }}
yaml_inline:
  value: {{ data | yaml }}
yaml_scalar: {{ 'plain' | yaml | json }}
yaml_list_of_dicts: {{ grains.gsalt_users | yaml(False) | json }}
json_sorted: {{ data | json | json }}
json_inline: {{ data | json }}
tojson: {{ {'z': '<a&b>', 'a': "it's"} | tojson | json }}
python: {{ {'k': [1, None, 'x']} | python | json }}
yaml_encode: [{{ 'a: b' | yaml_encode }}, {{ 42 | yaml_encode }}, {{ true | yaml_encode }}, {{ None | yaml_encode }}, {{ 1.5 | yaml_encode }}]
yaml_dquote: {{ 'say "hi"\tnow' | yaml_dquote }}
yaml_squote: {{ "it's" | yaml_squote }}
to_bool: [{{ 'yes' | to_bool }}, {{ 'No' | to_bool }}, {{ 1 | to_bool }}, {{ 0 | to_bool }}, {{ 'TRUE' | to_bool }}, {{ [] | to_bool }}, {{ [1] | to_bool }}, {{ None | to_bool }}]
unique: {{ ['a', 'b', 'a', 'c', 'b'] | unique }}
union: {{ [1, 2, 3] | union([2, 4]) }}
intersect: {{ [1, 2, 3] | intersect([2, 3, 4]) }}
difference: {{ [1, 2, 3] | difference([2]) }}
symmetric_difference: {{ [1, 2, 3] | symmetric_difference([2, 4]) }}
min_max_avg: [{{ [3, 1, 2] | min }}, {{ [3, 1, 2] | max }}, {{ [1, 2, 3, 4] | avg }}]
regex_match: {{ 'abcd' | regex_match('^(.*)BC(.*)$', ignorecase=True) | string | json }}
regex_match_index: {{ ('abcd' | regex_match('^(.*)BC(.*)$', ignorecase=True))[1] }}
regex_search: {{ 'xx-123-yy' | regex_search('(\\d+)') | string | json }}
regex_search_none: "{{ 'abc' | regex_search('z') }}"
regex_replace: {{ 'lets replace spaces' | regex_replace('\\s+', '__') }}
regex_replace_group: {{ 'key=value' | regex_replace('(\\w+)=(\\w+)', '\\2=\\1') }}
regex_escape: {{ 'a.b*c' | regex_escape }}
match_test: [{{ 'foobar' is match('foo') }}, {{ 'foobar' is match('bar') }}]
sequence: [{{ 'one' | sequence | first }}, {{ ['two'] | sequence | first }}]
is_list: [{{ [1] | is_list }}, {{ 'x' | is_list }}]
is_ip: [{{ '10.0.0.1' | is_ip }}, {{ 'fe80::1' | is_ip }}, {{ 'nope' | is_ip }}, {{ '10.0.0.1/24' | is_ip }}]
is_ipv4: [{{ '10.0.0.1' | is_ipv4 }}, {{ 'fe80::1' | is_ipv4 }}]
is_ipv6: [{{ '10.0.0.1' | is_ipv6 }}, {{ 'fe80::1' | is_ipv6 }}]
ipaddr: {{ grains.gsalt_ips | ipaddr }}
ipv4: {{ grains.gsalt_ips | ipv4 }}
ipv6: {{ grains.gsalt_ips | ipv6 }}
ipaddr_single: {{ '192.168.1.10/24' | ipaddr }}
ipaddr_private: {{ ['10.1.1.1', '8.8.8.8'] | ipaddr('private') }}
network_hosts: {{ '10.0.0.0/30' | network_hosts }}
network_size: {{ '10.0.0.0/24' | network_size }}
md5: {{ 'gsalt' | md5 }}
sha1: {{ 'gsalt' | sha1 }}
sha256: {{ 'gsalt' | sha256 }}
sha512: {{ 'gsalt' | sha512 }}
base64_encode: {{ 'gsalt rocks' | base64_encode }}
base64_decode: {{ 'Z3NhbHQgcm9ja3M=' | base64_decode }}
strftime: {{ 1040817600 | strftime('%Y/%m/%d %j %a %b %B %A %y %%') }}
strftime_default: {{ '1040817600' | strftime }}
dictsort: {{ {'b': 2, 'A': 3, 'c': 1} | dictsort | string | json }}
dictsort_value: {{ {'b': 2, 'a': 3, 'c': 1} | dictsort(false, 'value') | string | json }}
traverse: [{{ grains.gsalt_nested | traverse('a:b') }}, {{ grains.gsalt_nested | traverse('a:list:1') }}, {{ grains.gsalt_nested | traverse('a:nope', 'dflt') }}]
quote: {{ "it's here" | quote | json }}
uuid: {{ 'example' | uuid }}
flatten: {{ [1, [2, [3, None]], 4] | flatten }}
to_num: [{{ '42' | to_num }}, {{ '4.5' | to_num }}, {{ 'x' | to_num }}]
sorted_ignorecase: {{ ['b', 'A', 'c'] | sorted_ignorecase }}
exactly_one_true: {{ [0, 1, 0] | exactly_one_true }}
compare_lists: {{ [1, 2, 3] | compare_lists([2, 3, 4]) }}
skip: "{{ 'hidden' | skip }}"
path_join: {{ '/etc' | path_join('salt', 'minion') }}
load_yaml_filter: {{ ("{a: 1, b: [x, y]}" | load_yaml).b }}
load_json_filter: {{ ('{"k": [1, 2]}' | load_json).k }}
dict_to_sls_yaml_params: {{ {'name': 'thing', 'changes': true} | dict_to_sls_yaml_params | json }}
