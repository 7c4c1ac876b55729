base:
  '*': [a
