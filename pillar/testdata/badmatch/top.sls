base:
  '*':
    - match: bogus
    - x
