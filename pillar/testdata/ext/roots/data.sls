source: pillar_roots
nested:
  a: 0
  fromroots: yes
list:
  - r
