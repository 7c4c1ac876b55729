base:
  '*':
    - svc.config
    - svc
