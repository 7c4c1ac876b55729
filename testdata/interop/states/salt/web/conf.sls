{% set root = pillar['root'] %}
web-appended:
  file.append:
    - name: {{ root }}/etc/appended
    - makedirs: True
    - text:
      - first line
      - second line

extend:
  motd:
    file.managed:
      - mode: '0640'
