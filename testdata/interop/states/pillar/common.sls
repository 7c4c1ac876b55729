users:
  - alice
  - bob
web:
  port: 8080
  options:
    timeout: 30
    keepalive: on
