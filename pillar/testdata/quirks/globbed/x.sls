gx: {l: [x]}
