gx: {l: [y], m: 1}
