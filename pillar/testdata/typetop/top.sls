base:
  '*': 5
