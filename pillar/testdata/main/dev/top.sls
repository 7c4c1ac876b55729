dev:
  '*':
    - devstuff
