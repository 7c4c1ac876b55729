{%- from './helper.jinja' import helper_value %}
{%- from 'lib/map.jinja' import web %}
web_pkg: {{ web.pkg }}
helper: {{ helper_value }}
sls_vars:
  sls: {{ sls }}
  slspath: {{ slspath }}
  sls_path: {{ sls_path }}
  slsdotpath: {{ slsdotpath }}
  slscolonpath: {{ slscolonpath }}
  tpldir: {{ tpldir }}
  tplfile: {{ tplfile }}
  tpldot: {{ tpldot }}
