base:
  '*':
    - common
    - web
