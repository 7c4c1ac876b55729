# Data shared by every device of the site (the templates' "site").
naas:
  site:
    domain: dc1.example.net
    ntp_servers:
      - 192.0.2.1
      - 192.0.2.2
    syslog_servers:
      - 192.0.2.10
