base:
  '*':
    - common
    - root
