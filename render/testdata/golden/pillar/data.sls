app:
  name: myapp
  port: 8080
  enabled: yes
  tags: [a, b]
  settings:
    zeta: 1
    alpha: 2
    mu: 3
pkgs:
  - nginx
  - curl
empty_value:
ports:
  80: http
  443: https
