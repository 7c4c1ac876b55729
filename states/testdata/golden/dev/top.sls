dev:
  'golden':
    - devstate
base:
  '*':
    - never
