{#- The data model of this device (the templates' "device") from the
    inventory, and its NAPALM proxy configuration. A minion missing from
    the inventory gets neither. Keep the credentials in a secret store (or
    at least a pillar file only root can read): credentials.yaml. -#}
{%- import_yaml 'naas/inventory.yaml' as inventory %}
{%- import_yaml 'naas/credentials.yaml' as credentials %}
{%- set dev = inventory.get(grains['id']) %}
{%- if dev %}
naas:
  device: {{ dev | json }}
proxy:
  proxytype: napalm
  driver: ios
  host: {{ dev['host'] | json }}
  username: {{ credentials['username'] | json }}
  password: {{ credentials['password'] | json }}
  timeout: 30
  optional_args:
    port: {{ dev.get('port', 22) }}
{%- endif %}
