base:
  '*':
    - app
    - templated
  'db*':
    - broken
