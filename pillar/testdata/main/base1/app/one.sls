apps:
  - one
