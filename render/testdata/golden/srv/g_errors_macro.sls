{%- from 'lib/broken.jinja' import boom %}
a: {{ boom() }}
