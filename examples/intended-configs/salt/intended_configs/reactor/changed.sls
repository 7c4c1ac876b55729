{#- salt/beacon/<minion>/inotify/<intended dir>: a file of the intended
    directory was written or renamed into it. <id>.cfg names the device
    whose running configuration it replaces; other files (temporary files,
    dot files, editor backups) are ignored, and so are deletions. The
    device fetches the file itself (salt://intended/<id>.cfg). queue: True
    makes a reaction that arrives while the device runs a state wait for it
    instead of failing. -#}
{%- set path = data.get('path', '') %}
{%- set name = path.split('/')[-1] %}
{%- set change = data.get('change', '') %}
{%- set device = name[:-4] if name.endswith('.cfg') else '' %}
{%- if device and not device.startswith('.')
      and change.split('|')[0] in ['IN_MODIFY', 'IN_MOVED_TO', 'IN_CLOSE_WRITE'] %}
intended_replace_{{ device }}:
  local.state.apply:
    - tgt: {{ [device] | json }}
    - tgt_type: list
    - args:
      - mods: intended_configs.replace
      - queue: True
{%- endif %}
