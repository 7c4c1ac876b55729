# Pillar for napalm-salt's examples/router (the repository ships none),
# written for the formula corpus from the parameters its states take
# (Salt's netntp, netsnmp, netusers and probes state modules): what a
# NAPALM proxy minion of a router would have.
proxy:
  proxytype: napalm
  driver: ios
  host: router1.example.org
  username: admin
  passwd: admin
ntp.peers:
  - 172.17.17.1
  - 172.17.17.2
ntp.servers:
  - 10.10.10.1
  - 10.10.10.2
snmp:
  contact: noc@example.org
  location: Unknown
snmp.config:
  # a list: Salt 3006's netsnmp.managed raises on a community given as a
  # dict of details (its _clear_community_details assigns to dict.get)
  community:
    - public
    - private
  location: Rack 12, DC 1
  chassis_id: R1-{{ grains['id'] }}
# users (the default users of every router) left out: netusers.managed
# takes a dict of users there
users.config:
  admin:
    level: 15
    password: $1$0P70xKPa$z46fewjo/10cBTckk6I/w/
    sshkeys:
      - ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC4vwWHh0wJPK admin@example.org
  noc:
    level: 5
    password: noc-secret
probes:
  probe_count: 15
  test_interval: 3
probes.config:
  "1":
    test1:
      probe_type: icmp-ping
      target: 192.168.0.1
      source: 192.168.0.2
    test2:
      target: 172.17.17.1
  "2":
    test3:
      probe_count: 5
      target: 8.8.8.8
