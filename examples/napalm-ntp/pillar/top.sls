base:
  '*':
    - ntp
