base:
  '*':
    - naas.site
    - naas.device
