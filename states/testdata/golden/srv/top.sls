base:
  '*':
    - main
  'golden':
    - match: glob
    - rt.order
    - rt.use
  'G@os:NoSuchOS':
    - never
  'nomatch*':
    - never
