#!yaml
bools: [yes, no, on, off, true, false, True, FALSE, Yes, y, n, Y, N]
nulls: [~, null, Null, NULL, '', ]
empty_value:
ints: [0, 12, -3, +4, 0755, 0o17, 0x1F, 0b101, 1_000, 190:20:30, -0755, 09, 0009]
floats: [1.5, -2.0, 1., .5, 1.5e+3, 1e3, 6.8523015e+5, 190:20:30.15, .inf, -.Inf, 1_000.5]
strings: ['quoted', "double \t tab", plain text, 2001-12-14, 2001-12-14t21:59:43.10-05:00, '0755', 12:30, 1.2.3]
tagged: [!!str 123, !!int "42", !!float "1", !!bool "yes", !!str yes, !!null '']
multiline_literal: |
  line one
    indented
  line three
multiline_folded: >
  folded
  text

  new para
keep: |+
  kept

strip: |-
  stripped
anchors:
  base: &base {a: 1, b: 2}
  derived:
    <<: *base
    b: 3
    c: 4
  alias: *base
ordered:
  zzz: 1
  aaa: 2
  mmm: 3
"quoted key": 1
? complex key
: complex value
1: int key
2.5: float key
null: null key
nested: {a: [1, {b: c}], d: {e: f}}
unicode: "caf\u00e9 ☕"
