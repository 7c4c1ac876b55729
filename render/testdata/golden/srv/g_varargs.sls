{%- macro kw(a) -%}{{ a }}|{{ varargs | list }}|{{ kwargs | dictsort }}{%- endmacro %}
implicit_varargs: "{{ kw(1, 2, 3, x=4) }}"
