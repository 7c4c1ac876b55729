extend: [a]
