{{ saltenv }}:
  '*':
    - envdata
