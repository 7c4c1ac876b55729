{% set root = pillar['root'] %}
include:
  - common
  - web.conf

web-config:
  file.managed:
    - name: {{ root }}/etc/web.conf
    - source: salt://web/files/web.conf.jinja
    - template: jinja
    - context:
        port: {{ pillar['web']['port'] }}
    - defaults:
        workers: 2
    - require:
      - file: common-dir

web-line:
  file.line:
    - name: {{ root }}/etc/web.conf
    - content: 'log = on'
    - mode: ensure
    - after: 'port = .*'
    - require:
      - file: web-config

web-block:
  file.blockreplace:
    - name: {{ root }}/etc/web.conf
    - marker_start: '# BEGIN managed'
    - marker_end: '# END managed'
    - content: |
        allow = 10.0.0.0/8
    - append_if_not_found: True
    - require:
      - file: web-line

web-replace:
  file.replace:
    - name: {{ root }}/etc/motd
    - pattern: 'Managed by salt'
    - repl: 'Managed by configuration management'
    - require:
      - file: motd

web-reload:
  cmd.run:
    - name: echo reloaded > {{ root }}/reloaded
    - onchanges:
      - file: web-config

web-marker:
  cmd.run:
    - name: touch {{ root }}/marker
    - creates: {{ root }}/marker

web-link:
  file.symlink:
    - name: {{ root }}/etc/web.link
    - target: {{ root }}/etc/web.conf
    - require:
      - file: web-config

web-stale:
  file.absent:
    - name: {{ root }}/stale

web-notify:
  test.succeed_with_changes:
    - watch:
      - file: web-config

web-fallback:
  test.succeed_without_changes:
    - onfail:
      - file: web-config
