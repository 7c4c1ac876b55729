# Writes yamlex.golden.json: every input of the table below (hand-written
# documents, then generated ones: each pair of value forms under a key
# written twice, with and without !aggregate and !reset) decoded by Salt
# 3006's yamlex serializer (salt.serializers.yamlex.deserialize) and
# rendered by its yamlex renderer (salt.renderers.yamlex.render). Run by
# `GSALT_SALT_SRC=/path/to/salt go test ./render -run TestYAMLExGolden -update`.
import json, logging, os, sys

logging.disable(logging.CRITICAL)

import salt.renderers.yamlex as renderer
import salt.serializers.yamlex as yamlex

renderer.__opts__ = {}
renderer.__salt__ = {}

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from typed import run  # noqa: E402

cases = [
    ("doc_placeholder", "placeholder: !aggregate foo\nplaceholder: !aggregate bar\nplaceholder: !aggregate baz\n"),
    ("doc_reset", "placeholder: {!aggregate foo: {foo: 42}}\nplaceholder: {!aggregate foo: {bar: null}}\n!reset placeholder: {!aggregate foo: {baz: inga}}\n"),
    ("doc_reset_then_agg", "a: !aggregate [1, 2]\n!reset a: !aggregate [3]\na: !aggregate [3, 4]\n"),
    ("plain_dup_scalar", "a: 1\nb: 2\na: 3\n"),
    ("plain_dup_map", "a: {x: 1, y: 2}\na: {z: 3}\n"),
    ("plain_dup_list", "a: [1, 2]\na: [2, 3]\n"),
    ("agg_lists", "a: !aggregate [1, 2]\na: !aggregate [2, 3, 3]\n"),
    ("agg_maps_nested", "a: !aggregate {x: {p: 1}, y: 1}\na: !aggregate {x: {q: 2}, z: 3}\n"),
    ("agg_maps_nested_agg", "a: !aggregate {x: !aggregate {p: 1}, y: [1]}\na: !aggregate {x: !aggregate {q: 2}, y: [2]}\n"),
    ("agg_one_side", "a: !aggregate [1]\na: [2]\nb: [1]\nb: !aggregate [2]\n"),
    ("agg_null", "a: !aggregate\na: !aggregate 1\na: !aggregate ~\n"),
    ("agg_on_key", "!aggregate a: 1\n!aggregate a: 2\n"),
    ("reset_value", "a: !reset [1, 2]\nb: !reset {c: 1}\n"),
    ("nested_dup", "top:\n  a: !aggregate 1\n  a: !aggregate 2\n  b: {c: 1}\n  b: {d: 2}\n"),
    ("block_style", "pkgs:\n  - vim\npkgs: !aggregate\n  - git\npkgs: !aggregate\n  - curl\n"),
    ("order_kept", "z: 1\na: 2\nm: {y: 1, b: 2, a: 3}\n"),
    ("ints", "a: 010\nb: 0\nc: -010\nd: 1_000\ne: +5\nf: 0x1F\n"),
    ("int_hex", "a: 0x1F\n"),
    ("int_bin", "a: 0b101\n"),
    ("int_sexagesimal", "a: 190:20:30\n"),
    ("int_zeros", "a: 000\n"),
    ("floats", "a: 1.5\nb: .inf\nc: -.Inf\nd: 1.5e+3\ne: 190:20:30.15\nf: 1.\n"),
    ("bools_nulls", "a: yes\nb: off\nc: ~\nd: null\ne:\nf: True\n"),
    ("strings", "a: 'quoted 1'\nb: \"x\\ty\"\nc: |\n  line1\n  line2\nd: plain text\ne: y\n"),
    ("timestamps", "a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-12-14 21:59:43.10\nd: 2002-12-14T01:02:03Z\n"),
    ("timestamp_bad", "a: 2001-13-14\n"),
    ("binary", "a: !!binary aGVsbG8=\n"),
    ("explicit_map_dup", "a: !!map {x: 1, x: 2}\n"),
    ("explicit_omap_seq", "a: !!omap [{x: 1}, {y: 2}]\n"),
    ("explicit_str_int", "a: !!str 1\nb: !!int '7'\nc: !!float '2'\n"),
    ("unknown_tag", "a: !foo bar\n"),
    ("root_scalar", "hello\n"),
    ("root_int", "42\n"),
    ("root_list", "[1, 2, 3]\n"),
    ("root_null", "~\n"),
    ("empty", ""),
    ("comment_only", "# nothing\n"),
    ("tab_error", "a:\n\tb: 1\n"),
    ("syntax_error", "a: [1, 2\n"),
    ("two_docs", "a: 1\n---\nb: 2\n"),
    ("unhashable_key", "? [1, 2]\n: x\n"),
    ("int_keys", "1: a\n1.0: b\ntrue: c\n"),
    ("anchors", "base: &b {x: 1}\nother: *b\nmerged:\n  <<: *b\n  y: 2\n"),
    ("merge_dup", "base: &b {x: 1, y: 1}\nm:\n  <<: *b\n  x: 2\n"),
    ("list_of_maps", "a:\n  - name: x\n    v: 1\n  - name: y\n"),
    ("reset_nested", "a:\n  b: !aggregate [1]\n  !reset b: !aggregate [2]\n  b: !aggregate [3]\n"),
    ("agg_scalar_then_list", "a: !aggregate 1\na: !aggregate [1, 2]\n"),
    ("agg_map_then_list", "a: !aggregate {x: 1}\na: !aggregate [1]\n"),
    ("agg_list_then_map", "a: !aggregate [1]\na: !aggregate {x: 1}\n"),
    ("agg_in_list", "a: [!aggregate 1, !aggregate {b: 1}]\n"),
    ("agg_dup_items", "a: !aggregate [1, 1, 2]\na: !aggregate [1, 3, 3]\n"),
    ("agg_equal_values", "a: !aggregate [1, 1.0, true]\na: !aggregate [1.0, 2]\n"),
    ("agg_nested_maps_three", "a: !aggregate {b: !aggregate {c: !aggregate [1]}}\na: !aggregate {b: !aggregate {c: !aggregate [2]}}\na: !aggregate {b: !aggregate {d: 1}}\n"),
]

# generated: every pair of value forms under one key written twice
forms = {
    "scalar": "1", "str": "foo", "list": "[1, 2]", "map": "{x: 1, y: 2}", "null": "~",
}
forms2 = {
    "scalar": "2", "str": "bar", "list": "[2, 3]", "map": "{y: 3, z: 4}", "null": "~",
}
for n1, v1 in forms.items():
    for n2, v2 in forms2.items():
        for t1, t2, kt in (("", "", ""), ("!aggregate ", "!aggregate ", ""), ("!aggregate ", "!aggregate ", "!reset ")):
            label = {"": "plain", "!aggregate ": "agg"}[t1] + ("_reset" if kt else "")
            cases.append(("gen_%s_%s_%s" % (label, n1, n2), "k: %s%s\n%sk: %s%s\n" % (t1, v1, kt, t2, v2)))


out = []
for name, text in cases:
    out.append({
        "name": name,
        "input": text,
        "deserialize": run(yamlex.deserialize, text),
        "render": run(renderer.render, text),
    })
with open(os.path.join(here, "yamlex.golden.json"), "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(out), "cases")
