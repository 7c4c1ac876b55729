base:
  'db*':
    - from_extratop
{% if grains['os'] == 'Debian' %}
  'web?':
    - order: 5
    - late
{% endif %}
