foo: bar
baz: test.nop
