#!jinja|toml
[minion]
id = "{{ grains['id'] }}"
{% for n in range(3) %}
n{{ n }} = {{ n * 10 }}
{%- endfor %}
