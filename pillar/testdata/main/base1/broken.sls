broken: [1, 2
