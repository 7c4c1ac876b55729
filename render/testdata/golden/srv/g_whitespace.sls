{#- whitespace handling (trim_blocks/lstrip_blocks off, as Salt) #}
{% set x = 1 %}
a: |
  {% if x %}
  indented-if
  {% endif %}
  {%- for i in [1, 2] %}
  item{{ i }}
  {%- endfor %}
  {# comment #}
  end
b: "{{ 'x' }}   {{- 'y' }}"
c: "{%+ if true %}plus{% endif %}"
d: |
  {%- for i in [1, 2] %}
  n{{ i }}
  {% endfor -%}
  after
