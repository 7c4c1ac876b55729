{% set root = pillar['root'] %}
common-dir:
  file.directory:
    - name: {{ root }}/etc
    - makedirs: True
    - mode: '0755'

motd:
  file.managed:
    - name: {{ root }}/etc/motd
    - contents: |
        Welcome to {{ grains['id'] }}
        Managed by salt
    - mode: '0644'
    - require:
      - file: common-dir

{% for user in pillar['users'] %}
user-{{ user }}:
  file.managed:
    - name: {{ root }}/etc/users/{{ user }}
    - contents: {{ user | upper }}
    - makedirs: True
{% endfor %}
