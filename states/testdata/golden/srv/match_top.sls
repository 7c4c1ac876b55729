base:
  'golden':
    - b1
  'G@os:Debian and not L@other':
    - b2
  'os:Debian':
    - match: grain
    - b3
  'gold.*':
    - match: pcre
    - b4
  'x,golden':
    - match: list
    - b5
  'grp':
    - match: nodegroup
    - b7
  'os:Deb.*n':
    - match: grain_pcre
    - b8
  'os:Nope':
    - match: grain
    - never
  'N@grp':
    - b9
  '*':
    - subfilter:
        'G@os:Debian':
          - sub1
        'G@os:Nope':
          - never
      base: sub2
    - dev: fromdev
dev:
  '*':
    - b_dev_from_base
