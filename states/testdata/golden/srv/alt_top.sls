base:
  'golden':
    - rt.order
  'nomatch':
    - rt.misc
