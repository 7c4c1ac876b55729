foo:
  test.nope: []
bar:
  nomod.fun: []
