devstuff: {from: dev, saltenv: {{ saltenv }}}
