shadowed: true
