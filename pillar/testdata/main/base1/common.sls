common: true
shared:
  a: 1
  list: [1, 2]
  nested: {x: 1, y: 2}
os_says: {{ grains['os'] }}
