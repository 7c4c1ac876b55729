apps:
  - two
