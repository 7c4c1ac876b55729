base:
  '*':
    - data
