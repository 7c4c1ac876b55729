included_key: included {{ grains.os }}
included_local: {{ local_var | default('no-local') }}
