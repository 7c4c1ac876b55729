a: {{ grains.nope.deeper }}
