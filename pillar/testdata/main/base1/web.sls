include:
  - templated:
      key: 'nested:deep'
      defaults:
        color: blue
  - plainafter
web:
  port: 80
shared:
  b: 2
  list: [3, 1]
  nested: {y: 20, z: 30}
