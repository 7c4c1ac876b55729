include:
  - extratop
base:
  '*':
    - common
    - users
    - blank
  'web*':
    - web
    - 'app.*'
  'db[0-9]+':
    - match: pcre
    - db
  'os:Debian':
    - match: grain
    - debian
  'kernel:Lin.*':
    - match: grain_pcre
    - linux
  'web1,db1':
    - match: list
    - listed
  'G@role:app and not web2':
    - app_role
  'I@role:app or P@nosuch:x':
    - never
  'role:app':
    - match: pillar
    - never
  'role:app ':
    - match: pillar_exact
    - never
  'webgroup':
    - match: nodegroup
    - nodegroup
  'N@webgroup and G@os:Debian':
    - nodegroup_compound
  '10.1.0.0/16':
    - match: ipcidr
    - netted
  'S@192.168.0.0/16':
    - netted_compound
  'nobody*':
    - nothing
  'G@os:CentOS':
    - missing_sls
  'db1':
    - broken
    - notdict
    - badinc
    - ignore_missing: True
    - gone
  'web2':
    - order: -1
    - early
    - ignore_missing: True
    - gone
    - also_missing
  'L@web1,web2':
    - merged_a
    - merged_b
dev:
  'web1':
    - devstuff
prod:
  '*':
    - prodstuff
