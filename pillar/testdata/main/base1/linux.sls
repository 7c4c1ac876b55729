linux: true
