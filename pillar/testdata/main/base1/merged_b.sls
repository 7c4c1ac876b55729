include:
  - merged_c
merge:
  k2: b
  deep: {b: 2, l: [b, a]}
  replaced: {now: map}
