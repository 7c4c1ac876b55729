"""Write cases.json, the differential Jinja corpus, from hand/*.txt and generated families.

Usage: python3 gen.py CORPUS_DIR   (plain Python 3; no Salt needed)

Deterministic: the generated families draw from random.Random(SEED), and
the output order and ids depend only on this file and hand/*.txt. A case id
is "<category>.<first 10 hex digits of the sha1 of the case>", so ids stay
stable when cases are added or removed elsewhere.

hand/<category>.txt format:
  - "#" lines and blank lines outside a block are ignored;
  - any other line is a one-line template (no trailing newline);
  - a block starts with ">>> case" optionally followed by a JSON object
    ({"vars": {...}, "opts": {...}, "name": "sub/case.sls", "pillar": {...},
    "nonl": true}); its template runs until ">>> file PATH" (the extra
    salt:// file PATH follows) or ">>> end". Block texts end with a newline
    unless "nonl" is set.
"""
import glob
import hashlib
import json
import os
import random
import sys

SEED = 20261127

corpus = os.path.abspath(sys.argv[1])
cases = []
seen = set()


def add(cat, template, files=None, vars=None, opts=None, name=None, pillar=None):
    case = {"template": template}
    if files:
        case["files"] = files
    if vars:
        case["vars"] = vars
    if opts:
        case["opts"] = opts
    if name:
        case["name"] = name
    if pillar is not None:
        case["pillar"] = pillar
    key = json.dumps(case, sort_keys=True, ensure_ascii=False)
    cid = cat + "." + hashlib.sha1(key.encode()).hexdigest()[:10]
    if cid in seen:
        return
    seen.add(cid)
    case = dict({"id": cid, "category": cat}, **case)
    cases.append(case)


def parse_hand(path):
    cat = os.path.basename(path)[: -len(".txt")]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith(">>> case"):
            if line.strip() and not line.startswith("#"):
                add(cat, line)
            continue
        meta = json.loads(line[len(">>> case") :].strip() or "{}")
        parts = [("", [])]
        while i < len(lines) and lines[i] != ">>> end":
            if lines[i].startswith(">>> file "):
                parts.append((lines[i][len(">>> file ") :].strip(), []))
            else:
                parts[-1][1].append(lines[i])
            i += 1
        i += 1
        texts = []
        for fname, body in parts:
            text = "\n".join(body) + "\n"
            if meta.get("nonl"):
                text = text[:-1]
            texts.append((fname, text))
        add(
            cat,
            texts[0][1],
            files={k: v for k, v in texts[1:]} or None,
            vars=meta.get("vars"),
            opts=meta.get("opts"),
            name=meta.get("name"),
            pillar=meta.get("pillar"),
        )


for p in sorted(glob.glob(os.path.join(corpus, "hand", "*.txt"))):
    parse_hand(p)

rng = random.Random(SEED)

# Values as Jinja source, covering every Python type a template meets.
VALUES = [
    "0", "1", "-3", "7", "2.5", "-0.5", "0.0", "True", "False", "None",
    "'ab'", "''", "'3'", "[1, 2]", "[]", "(1,)", "()", "{'a': 1}", "{}",
    "100000000000000000000", "'Ab c'", "[3, 1, 2]", "('x', 2)",
]
SCALARS = ["0", "1", "-3", "7", "2.5", "-0.5", "True", "False", "None", "'ab'", "''", "100000000000000000000"]

# --- literals and printing ---------------------------------------------
LITERALS = [
    "0", "-0", "42", "-17", "1_000_000", "0x1F", "0o17", "0b101", "12345678901234567890123",
    "-98765432109876543210", "1.5", "-2.25", "1e3", "1E-3", "2.5e10", "1.0", "-0.0", "0.1",
    "100.0", "1e16", "1e22", "123456789.123", "3.0e-5", "1_0.5",
    "'single'", '"double"', "'it\\'s'", '"say \\"hi\\""', "'tab\\tsep'", "'new\\nline'",
    "'back\\\\slash'", "'\\u00e9t\\u00e9'", "'caf\u00e9'", "'\\x41'", "''", '""',
    "[]", "[1]", "[1,]", "[1, 2, 3,]", "()", "(1,)", "(1, 2,)", "(1, 'a', None)", "{}",
    "{'a': 1,}", "{'a': 1, 'b': [1, 2],}", "{1: 'one', 2: 'two'}", "{'n': None, 't': True}",
    "[[1, 2], [3, [4, 5]]]", "{'k': {'j': {'i': 1}}}", "((1, 2), (3, 4))", "[(1, 2)]",
    "True", "False", "true", "false", "None", "none", "[True, none, False]",
    "'a' 'b'", "'a' \"b\" 'c'", "[1, 'two', 3.0, None, True]", "{(1, 2): 'tuple key'}",
    "{True: 'b'}", "{None: 'n'}", "{1.5: 'f'}", "{'a': 1, 'a': 2}", "{1: 'i', True: 'b'}",
    "{0: 'z', False: 'f', 0.0: 'fl'}", "'\u2603'", "'\\N{SNOWMAN}'", "1 if True", "(1)", "((1))",
]
for lit in LITERALS:
    add("literals", "{{ %s }}" % lit)
    add("literals", "{{ [%s] }}" % lit)
    add("literals", "{{ %s|string }}" % lit)

FLOATS = ["0.1 + 0.2", "1 / 3", "2 / 2", "10 / 4", "1e300 * 1e10", "-1e300 * 1e10", "0.1 * 3",
          "1e15 + 0.3", "123456789012345678.0", "1 / 7 * 7", "2 ** 0.5", "2 ** -1", "(2 ** 0.5) ** 2",
          "5e-324", "1.7976931348623157e308", "0.000001", "0.0000001", "1e21", "1e-7 * 10",
          "3.14159 * 2", "-7 / 2", "7 // -2", "-7 % 3", "7 % -3", "-7.5 // 2", "7.5 % 2",
          "2 ** 100", "2 ** 64 - 1", "-(2 ** 63)", "10 ** 20 // 3", "10 ** 20 % 7",
          "(10 ** 20) * (10 ** 20)", "2 ** 62 * 4", "9223372036854775807 + 1", "-9223372036854775808 - 1",
          "18446744073709551615 // 2", "(2 ** 70) / 2", "12345678901234567890 - 12345678901234567889",
          "int('99999999999999999999') + 1", "'%d' % (2 ** 65)", "(2 ** 65)|string|length",
          "2 ** 65 > 2 ** 64", "[2 ** 65, 1]|max", "(2 ** 65)|float", "(10 ** 20)|abs", "-(10 ** 20)|abs"]
for e in FLOATS:
    add("numbers", "{{ %s }}" % e)

# --- binary operators on every pair of value kinds -----------------------
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "in", "not in",
          "and", "or", "~"]
for op in BINOPS:
    pairs = [(a, b) for a in VALUES for b in VALUES]
    rng.shuffle(pairs)
    n = 24
    for a, b in pairs[:n]:
        if op == "**" and a.startswith("1000") and b.startswith("1000"):
            continue
        add("operators", "{{ %s %s %s }}" % (a, op, b))
for a in SCALARS:
    for op in ["-", "+", "not "]:
        add("operators", "{{ %s%s }}" % (op, a))
# string repetition / list ops
for e in ["'ab' * 3", "3 * 'ab'", "[1] * 3", "'ab' * 0", "'ab' * -1", "[1, 2] + [3]", "(1,) + (2,)",
          "'a' + 'b' + 'c'", "'x' ~ 1 ~ None ~ True", "1 ~ 2", "[1] ~ 'a'", "'b' in 'abc'",
          "'' in 'abc'", "1 in [1.0]", "True in [1]", "'a' in {'a': 1}", "1 in {1: 2}",
          "(1, 2) in [(1, 2)]", "[1] == [1]", "(1,) == [1]", "{'a': 1} == {'a': 1}",
          "1 == 1.0", "True == 1", "None == None", "None is none", "'a' < 'b'", "[1, 2] < [1, 3]",
          "(1, 2) < (1, 2, 0)", "'B' < 'a'", "1 < 2 < 3", "3 > 2 > 1 > 0", "1 < 3 > 2", "1 == 1 == 1",
          "1 < 2 == True", "2 ** 3 ** 2", "-2 ** 2", "(-2) ** 2", "not 1 == 2", "not not 0",
          "1 + 2 * 3 - 4 / 2", "(1 + 2) * 3", "10 - 2 - 3", "100 / 10 / 5", "2 * 3 % 4", "7 // 2 * 2",
          "1 or 2 and 0", "(1 or 2) and 0", "0 and 1 or 2", "not 0 and 0", "'a' ~ 1 + 2",
          "1 if 0 else 2 if 0 else 3", "'y' if [] else 'n'", "'y' if 'x' in 'xyz' else 'n'",
          "[1, 2, 3][1:] + [4]", "('a' ~ 'b')|upper", "-1|abs", "(-1)|abs", "- 3 ** 2", "2 * -3",
          "1 - -1", "+-+1", "not 1 in [1]", "not (1 in [1])", "1 is number and 2 is number",
          "'%s-%s' % (1, 2) ~ 'x'", "'a' == 'a' and 'b' != 'c'", "[] or {} or 0 or '' or 'last'",
          "0 or None", "'' and 1", "[0] and 'x'"]:
    add("operators", "{{ %s }}" % e)

# random precedence expressions over small ints
ARITH = ["+", "-", "*", "//", "%", "**"]
CMP = ["<", ">", "==", "!=", "<=", ">="]


def rand_arith(depth):
    if depth == 0 or rng.random() < 0.3:
        return str(rng.randint(-4, 9))
    a, b = rand_arith(depth - 1), rand_arith(depth - 1)
    op = rng.choice(ARITH)
    if op == "**":
        b = str(rng.randint(0, 3))
    if op in ("//", "%") and b.lstrip("-") == "0":
        b = "3"
    form = rng.choice(["%s %s %s", "(%s %s %s)", "%s %s (%s)"])
    return form % (a, op, b)


def rand_bool(depth):
    if depth == 0 or rng.random() < 0.3:
        return "%s %s %s" % (rand_arith(1), rng.choice(CMP), rand_arith(1))
    op = rng.choice(["and", "or"])
    x = "%s %s %s" % (rand_bool(depth - 1), op, rand_bool(depth - 1))
    if rng.random() < 0.3:
        x = "not (%s)" % x
    if rng.random() < 0.3:
        x = "(%s)" % x
    return x


for _ in range(160):
    add("precedence", "{{ %s }}" % rand_arith(3))
for _ in range(100):
    add("precedence", "{{ %s }}" % rand_bool(2))

# --- truthiness ---------------------------------------------------------
TRUTHY = VALUES + ["'0'", "' '", "'False'", "[[]]", "[None]", "{'': ''}", "0.0000001", "-0.0",
                   "range(0)", "range(1)", "namespace()", "pillar.empty", "pillar.nothing",
                   "pillar.zero", "pillar.ports", "grains.empty_list", "grains.selinux.enabled",
                   "pillar.disabled", "lipsum", "dict()", "dict(a=1)"]
for v in TRUTHY:
    add("truthiness", "{%% if %s %%}T{%% else %%}F{%% endif %%}" % v)
    add("truthiness", "{{ not %s }}|{{ %s and 'and' or 'or' }}" % (v, v))
    add("truthiness", "{{ [%s]|select|list|length }}" % v)

# --- indices, slices ------------------------------------------------------
SEQS = ["'abcdef'", "[1, 2, 3, 4, 5]", "(10, 20, 30)", "''", "[]", "pillar.ports", "'\u00e9t\u00e9!'"]
for s in SEQS:
    for i in range(-7, 7):
        add("indexing", "{{ %s[%d] }}" % (s, i))
    for _ in range(12):
        parts = [rng.choice(["", str(rng.randint(-6, 6))]) for _ in range(2)]
        step = rng.choice(["", "", ":", ":" + str(rng.choice([-2, -1, 1, 2, 3]))])
        add("indexing", "{{ %s[%s:%s%s] }}" % (s, parts[0], parts[1], step))
for e in ["'abc'[::-1]", "[1,2,3][::-1]", "'abc'[0:0]", "[1,2,3][5:]", "[1,2,3][-10:2]", "'abc'[1.0]",
          "'abc'['a']", "[1,2][True]", "[1,2][False]", "{'a': 1}['a']", "{'a': 1}['b']", "{'a': 1}.a",
          "{'a': 1}.b", "{1: 'x'}[1]", "{1: 'x'}[1.0]", "{1: 'x'}[True]", "{True: 'x'}[1]",
          "{None: 'n'}[None]", "{(1, 2): 't'}[(1, 2)]", "{(1, 2): 't'}[1, 2]", "{'1': 's'}[1]",
          "pillar.ports_by_number[80]", "pillar.ports_by_number['80']", "pillar.flags[True]",
          "pillar.flags[False]", "pillar['ports'][0]", "pillar.ports.0", "pillar.nested.list.1.0",
          "pillar.nested['a']['b'].c", "pillar.users.alice.groups[-1]", "grains.ipv4[-1]",
          "grains['ip_interfaces']['eth0'][0]", "pillar.apache.vhosts['example.org'].root",
          "[1, 2, 3][0:2][1]", "'abc'[0][0][0]", "[[1, 2], [3, 4]][1][-1]", "'abc'[-1:-4:-1]",
          "'abc'[None:None]", "[1,2,3][:None]", "(1, 2, 3)[1:]", "range(10)[2:8:3]",
          "range(10)[-1]", "range(10)|list|last", "range(5, 0, -1)|list", "'abc'[10]",
          "[][0]", "{'a': {'b': 1}}['a']['c']", "'abc'.upper", "[1,2].count(1)", "'a'.b"]:
    add("indexing", "{{ %s }}" % e)

# --- tests ------------------------------------------------------------------
TESTS0 = ["defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number",
          "string", "mapping", "iterable", "sequence", "callable", "lower", "upper", "even", "odd",
          "escaped", "list"]
TESTS1 = ["divisibleby(3)", "eq(1)", "equalto('ab')", "ne(1)", "lt(2)", "gt(2)", "le(1)", "ge(1)",
          "lessthan(2)", "greaterthan(0)", "in([1, 'ab', None])", "in('abc')", "sameas(True)",
          "sameas(none)", "filter", "test", "match('a')", "match('^[0-9]+$')", "==(1)", "!=(1)",
          "< 3", ">= 1", "divisibleby 2"]
for t in TESTS0:
    for v in VALUES + ["nope", "pillar.nothing", "pillar.apache", "'upper'", "'UP'", "range(2)"]:
        add("tests", "{{ %s is %s }}" % (v, t))
for t in TESTS1:
    for v in rng.sample(VALUES, 9):
        add("tests", "{{ %s is %s }}" % (v, t))
for t in TESTS0[:10]:
    add("tests", "{{ 1 is not %s }}|{{ [1, 'a', None, []]|select('%s')|list }}" % (t, t))

# --- builtin filters --------------------------------------------------------
FILTERS = {
    "abs": ["", ], "attr": ["('upper')", "('a')"], "batch": ["(2)", "(3, 'x')"],
    "capitalize": [""], "center": ["", "(9)", "(9, '*')"], "count": [""],
    "d": ["", "('dflt')"], "default": ["", "('dflt')", "('dflt', true)", "(boolean=true)"],
    "dictsort": ["", "(true)", "(false, 'value')", "(reverse=true)"],
    "e": [""], "escape": [""], "filesizeformat": ["", "(true)"], "first": [""],
    "float": ["", "(1.5)"], "forceescape": [""], "format": ["", "('x')"],
    "groupby": ["('a')", "(0)"], "indent": ["", "(2)", "(2, true)", "(first=true)", "(4, blank=true)"],
    "int": ["", "(7)", "(0, 16)", "(base=2)"], "items": [""], "join": ["", "(',')", "(', ', 'a')"],
    "last": [""], "length": [""], "list": [""], "lower": [""],
    "map": ["('string')", "('upper')", "(attribute='a')", "('int')", "(attribute='a', default='z')"],
    "max": ["", "(attribute='a')", "(case_sensitive=true)"],
    "min": ["", "(attribute='a')"], "pprint": [""], "reject": ["", "('odd')", "('none')"],
    "rejectattr": ["('a')", "('a', 'eq', 1)"], "replace": ["('a', 'X')", "('a', 'X', 1)", "('', '-')"],
    "reverse": [""], "round": ["", "(1)", "(1, 'floor')", "(0, 'ceil')"], "safe": [""],
    "select": ["", "('even')", "('string')", "('gt', 1)"], "selectattr": ["('a')", "('a', 'defined')"],
    "slice": ["(2)", "(3, 0)"], "sort": ["", "(reverse=true)", "(attribute='a')", "(case_sensitive=true)"],
    "string": [""], "striptags": [""], "sum": ["", "(start=10)", "(attribute='a')"], "title": [""],
    "tojson": ["", "(2)"], "trim": ["", "('a')"], "truncate": ["", "(5)", "(5, true)", "(5, false, '!', 0)"],
    "unique": ["", "(case_sensitive=true)", "(attribute='a')"], "upper": [""], "urlencode": [""],
    "urlize": [""], "wordcount": [""], "wordwrap": ["(5)", "(5, false)"], "xmlattr": [""],
}
FILTER_INPUTS = ["'Hello wOrld'", "'  pad me  '", "-3", "2.567", "'42'", "'0x1A'", "'3.7'", "[3, 1, 2]",
                 "['b', 'A', 'c', 'a']", "[1, None, 0, 'x', []]", "{'b': 2, 'a': 1, 'C': 3}",
                 "[{'a': 2}, {'a': 1}, {'b': 3}]", "[{'a': 1, 'n': 'x'}, {'a': 1, 'n': 'y'}, {'a': 2, 'n': 'z'}]",
                 "''", "None", "True", "'<b>bold</b> & \"q\"'", "'a\\nb\\n\\nc'", "12345678",
                 "'word ' * 20", "pillar.apache", "pillar.ports", "'aAbB'", "[[1, 2], [3]]",
                 "'http://example.org/a b?x=1&y=2'", "{'a b': 'c&d', 'e': 1}", "range(5)"]
for f, argsl in FILTERS.items():
    for args in argsl:
        inputs = rng.sample(FILTER_INPUTS, 7)
        for inp in inputs:
            add("filters", "{{ %s|%s%s }}" % (inp, f, args))
        add("filters_undefined", "{{ nope|%s%s }}" % (f, args))
        add("filters_undefined", "{{ nope|%s%s }}" % (f, args), opts={"allow_undefined": True})
for t in TESTS0 + ["divisibleby(2)", "eq(1)", "in([1])", "sameas(none)"]:
    add("filters_undefined", "{{ nope is %s }}" % t)
    add("filters_undefined", "{{ nope is %s }}" % t, opts={"allow_undefined": True})

# --- Salt's filters ---------------------------------------------------------
SALT_FILTERS = {
    "yaml": ["", "(False)", "(True)"], "json": ["", "(sort_keys=False)"], "python": [""],
    "load_yaml": [""], "load_json": [""], "load_text": [""],
    "to_bool": [""], "to_num": [""], "str_to_num": [""], "unique": [""], "avg": [""],
    "is_list": [""], "is_iter": [""], "sequence": [""], "skip": [""], "flatten": ["", "(levels=1)", "(preserve_nulls=True)"],
    "sorted_ignorecase": [""], "exactly_one_true": [""], "exactly_n_true": ["(2)"],
    "substring_in_list": ["(['abc', 'x'])"], "compare_lists": ["([1, 4])"], "compare_dicts": ["({'a': 2})"],
    "union": ["([1, 'x'])"], "intersect": ["([1, 2, 'a'])"], "difference": (["([1])"]),
    "symmetric_difference": ["([1, 9])"], "is_hex": [""], "contains_whitespace": [""],
    "to_snake_case": [""], "to_camelcase": ["", "(True)"], "path_join": ["('x', 'y')"], "quote": [""],
    "regex_match": ["('([a-z]+)')", "('(?i)(H)ELLO')", "('^(\\\\d+)')"],
    "regex_search": ["('([0-9]+)')", "('o(.)')", "('(?P<w>w\\\\w+)')"],
    "regex_replace": ["('[aeiou]', '_')", "('(\\\\w+)', '<\\\\1>')", "('L', 'x', ignorecase=True)"],
    "regex_escape": [""], "md5": [""], "sha1": [""], "sha256": [""], "sha512": [""],
    "base64_encode": [""], "base64_decode": [""], "hmac": ["('secret', 'abc')"],
    "is_ip": [""], "is_ipv4": [""], "is_ipv6": [""], "ipaddr": ["", "('private')"], "ipv4": [""],
    "ipv6": [""], "ip_host": [""], "network_size": [""], "ipwrap": [""],
    "strftime": ["", "('%Y-%m-%d')", "('%H:%M:%S %j')"], "date_format": ["('%Y')"],
    "yaml_encode": [""], "yaml_dquote": [""], "yaml_squote": [""], "tojson": [""],
    "is_empty": [""], "human_to_bytes": [""], "to_bytes": [""], "md5|length": [""],
    "dict_to_sls_yaml_params": [""], "traverse": ["('a')", "('a:b', 'dflt')", "('0')"],
    "mac_str_to_bytes": [""], "json_encode_dict": [""], "json_encode_list": [""],
    "json_decode_dict": [""], "json_decode_list": [""],
    "check_whitelist_blacklist": ["(whitelist=['a*'])", "(blacklist=['web'])"],
    "combinations": ["(2)"], "permutations": ["(2)"], "product": ["([0, 1])"], "zip": ["([1, 2])"],
    "zip_longest": ["('xy')"], "compress": ["([1, 0, 1])"], "combinations_with_replacement": ["(2)"],
    "min": [""], "max": [""],
}
SALT_INPUTS = ["'Hello World 123'", "'yes'", "'off'", "'1'", "'0'", "1", "0", "'true'", "'42'", "'3.5'",
               "'abc'", "[1, 2, 2, 'a', 'A']", "[[1, [2, None]], 3]", "['b', 'A', 'c']", "{'a': {'b': 'c'}}",
               "{'b': 1, 'a': [1, 2]}", "'10.0.0.1'", "'fe80::1'", "'192.168.1.0/24'", "'300.1.1.1'",
               "['10.0.0.1', 'bad', '::1', '8.8.8.8']", "'aGVsbG8='", "'0xdeadbeef'", "'has space'",
               "'CamelCaseWord'", "'snake_case_word'", "1700000000", "0", "[True, False, True]",
               "'it''s'", "None", "'2 KB'", "'a\\tb'", "'00:1a:2b:3c:4d:5e'", "'web01'", "[]", "''",
               "'{\"x\": [1, 2]}'", "'a: 1\\nb: [x, y]'", "'/etc'"]
for f, argsl in SALT_FILTERS.items():
    for args in argsl:
        inputs = rng.sample(SALT_INPUTS, 8)
        for inp in inputs:
            if inp == "None" and f in ("strftime", "date_format"):
                continue  # the current time: not reproducible
            add("salt_filters", "{{ %s|%s%s }}" % (inp, f, args))
for e in ["pillar|yaml(False)", "grains.roles|json", "pillar.apache|json", "pillar.apache|yaml",
          "{'a': [1, {'b': None}], 'c': 'd: e'}|yaml(False)", "['x', 'y: z', '', 'null', 'yes']|yaml",
          "{'multi': 'a\\nb'}|yaml(False)", "{'k': 1.0, 'f': 1e20}|json", "{'u': 'caf\u00e9'}|json",
          "{'u': 'caf\u00e9'}|yaml", "pillar.users|dictsort|first|first", "pillar.nested|traverse('a:b:c')",
          "pillar.nested|traverse('list:1:0')", "pillar.nested|traverse('a:x', 'miss')",
          "pillar.ports|unique|json", "[3, 1, 2]|sort|json", "'2024-02-29'|is_hex", "'10.0.0.5/8'|ipaddr",
          "['10.0.0.1', '192.168.0.1', '8.8.8.8']|ipaddr('private')", "'10.0.0.0/30'|network_hosts",
          "'10.0.0.0/30'|network_hosts|list", "1700000000|strftime('%A %B %d')", "'abc'|regex_search('(x)')",
          "'abc'|regex_match('b')", "'abc'|regex_search('b')", "'a.b*c'|regex_escape", "'aaa'|regex_replace('a', 'b', count=2)",
          "{'b': 2, 'a': 1}|dictsort(by='value', reverse=true)", "[1, 2, 3]|random_sample(3)|sort",
          "'x'|uuid|length", "'abc'|random_hash|length", "[1, 2]|random_shuffle|sort",
          "10|random_str|length", "{'a': 1}|set_dict_key_value('b:c', 2)", "{'a': [1]}|append_dict_key_value('a', 2)",
          "{'a': [1]}|extend_dict_key_value('a', [2, 3])", "{'a': {'b': 1}}|update_dict_key_value('a', {'c': 2})",
          "'abc'|base64_encode|base64_decode", "'key = value'|regex_replace('\\\\s*=\\\\s*', '=')",
          "'eth0'|is_list", "grains.ip_interfaces|dictsort", "pillar.ports|avg", "[1.5, 2.5]|avg",
          "pillar.ports|min", "pillar.ports|max", "[]|avg", "'10.0.0.1'|ipwrap", "'::1'|ipwrap",
          "'2001:db8::/126'|network_hosts", "'2001:db8::/64'|network_size", "'10.1.2.3/24'|ip_host",
          "'10.1.2.3/24'|ipv4", "'10.1.2.3/24'|ipv6", "['10.1.2.3', 'fe80::1']|ipv6",
          "'x'|yaml_dquote", "'x\"y'|yaml_dquote", "\"it's\"|yaml_squote", "'a: b'|yaml_encode",
          "'1'|yaml_encode", "None|yaml_encode", "True|yaml_encode", "1.5|yaml_encode",
          "[1, 'a']|yaml_encode"]:
    add("salt_filters", "{{ %s }}" % e)
# Salt's random filters: seeded forms are Python's random.Random(hash(seed))
# exactly; unseeded ones only by their shape
for e in ["[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]|random_sample(4, seed='42')", "[1, 2, 3]|random_sample(3, 'a')",
          "[1, 2, 3]|random_sample(0, 'x')", "'abcdefgh'|random_sample(3, seed='')", "('a', 'b', 'c', 'd')|random_sample(2, 'caf\u00e9')",
          "range(1000)|random_sample(12, seed='seven')", "range(100)|random_sample(30, seed=grains.id)",
          "range(50)|random_sample(50, seed='x' * 300)", "[1, 2, 3]|random_sample(2, 42)", "[1, 2, 3]|random_sample(2, True)",
          "range(20)|random_sample(5, 1.5)", "range(20)|random_sample(5, [1])", "range(20)|random_sample(5, 'ab' ~ 3)",
          "range(10)|random_sample(4, seed=pillar.apache.user|default('www'))", "[1, 2]|random_sample(3, 'a')", "[1, 2]|random_sample(-1, 'a')",
          "{'a': 1}|random_sample(1, 'a')", "5|random_sample(1, 'a')", "[1, 2]|random_sample", "[1, 2]|random_sample('x', 'a')",
          "[1, 2]|random_sample(1.5, 'a')", "[1, 2]|random_sample(1, 'a', 2)", "[1, 2]|random_sample(1, bad=2)",
          "range(30)|random_shuffle(seed='5')", "'shuffle'|random_shuffle('11')", "[[1], [2], {'a': 3}]|random_shuffle('3')",
          "[]|random_shuffle('1')", "range(300)|random_shuffle(seed='2')|sum", "range(200)|random_shuffle(seed='9')|first",
          "{'a': 1}|random_shuffle('1')", "[3, 1, 2]|random_shuffle|sort", "range(1000)|random_sample(40, seed='31337')",
          "[1, 2, 3]|random_shuffle(7)", "range(5)|random_shuffle(seed=grains.fqdn)", "5|random_hash|length", "5|random_hash('sha256')|length", "5|random_hash(hash_type='sha512')|length",
          "5|random_hash('sha3_256')|length", "5|random_hash('blake2b')|length", "5|random_hash('nope')",
          "-1|random_hash", "-2|random_hash", "0|random_hash", "1.5|random_hash", "2.0|random_hash|length",
          "[1]|random_hash", "None|random_hash", "True|random_hash|length", "0|rand_str", "7|rand_str('sha1')|length",
          "0|random_str", "5|random_str|length", "-1|random_str", "'a'|random_str", "1.0|random_str", "50|random_str|length"]:
    add("salt_filters", "{{ %s }}" % e)
for e in ["'abc' is match('a')", "'abc' is match('b')", "'abc' is match('B', True)",
          "'abc' is match('(a)(b)', multiline=True)", "1 is equalto(1)", "'a' is equalto('a')",
          "[1] is list", "(1,) is list", "'x' is list", "{} is list", "pillar.ports is list",
          "ifelse('a', 1, 'b', 2, 3)", "ifelse('nomatch*', 1, 'default')", "ifelse('corpus', 'direct', 0)",
          "ifelse(False)"]:
    add("salt_tests", "{{ %s }}" % e)

# --- Python methods -----------------------------------------------------------
STR_METHODS = ["upper()", "lower()", "title()", "capitalize()", "swapcase()", "strip()", "lstrip()",
               "rstrip()", "strip('ax ')", "split()", "split(',')", "split(',', 1)", "rsplit(',', 1)",
               "split(None, 1)", "splitlines()", "startswith('a')", "startswith(('x', 'a'))", "endswith('c')",
               "find('b')", "rfind('b')", "index('b')", "rindex('b')", "count('a')", "replace('a', 'X')",
               "replace('a', 'X', 1)", "center(11, '-')", "ljust(8, '.')", "rjust(8)", "zfill(6)",
               "isdigit()", "isalpha()", "isalnum()", "isspace()", "islower()", "isupper()", "istitle()",
               "isnumeric()", "isdecimal()", "isidentifier()", "partition(',')", "rpartition(',')",
               "casefold()", "expandtabs(4)", "removeprefix('a')", "removesuffix('c')", "join(['1', '2'])",
               "encode()", "format(1)", "__len__()", "split('')", "ljust(2)", "count('')", "title().swapcase()"]
STRS = ["'abc'", "'  a,b , c  '", "'Hello World'", "''", "'123'", "'a\\tb\\nc'", "'ABC def'",
        "'x,y,,z'", "'caf\u00e9'", "pillar.multiline"]
for m in STR_METHODS:
    for s in rng.sample(STRS, 4):
        add("str_methods", "{{ %s.%s }}" % (s, m))
LIST_METHODS = ["{% set l = [3, 1, 2] %}{% do l.append(4) %}{{ l }}",
                "{% set l = [3, 1, 2] %}{% do l.extend([5, 6]) %}{{ l }}",
                "{% set l = [3, 1, 2] %}{% do l.insert(0, 'x') %}{{ l }}",
                "{% set l = [3, 1, 2] %}{{ l.pop() }}{{ l }}",
                "{% set l = [3, 1, 2] %}{{ l.pop(0) }}{{ l }}",
                "{% set l = [3, 1, 2] %}{{ l.pop(-2) }}{{ l }}",
                "{% set l = [3, 1, 2] %}{% do l.remove(1) %}{{ l }}",
                "{% set l = [3, 1, 2] %}{% do l.remove(9) %}{{ l }}",
                "{% set l = [3, 1, 2] %}{{ l.index(2) }}",
                "{% set l = [3, 1, 2] %}{{ l.index(9) }}",
                "{% set l = [3, 1, 2, 1] %}{{ l.count(1) }}",
                "{% set l = [3, 1, 2] %}{% do l.sort() %}{{ l }}",
                "{% set l = [3, 1, 2] %}{% do l.sort(reverse=True) %}{{ l }}",
                "{% set l = [3, 1, 2] %}{% do l.reverse() %}{{ l }}",
                "{% set l = [3, 1, 2] %}{% set m = l.copy() %}{% do m.append(0) %}{{ l }}{{ m }}",
                "{% set l = [3, 1, 2] %}{% do l.clear() %}{{ l }}",
                "{% set l = [3, 'a', 2] %}{% do l.sort() %}{{ l }}",
                "{% set l = [] %}{% for i in range(3) %}{% do l.append(i * 2) %}{% endfor %}{{ l }}",
                "{% set l = [1] %}{% set m = l %}{% do m.append(2) %}{{ l }}",
                "{% set l = [[1]] * 2 %}{% do l[0].append(2) %}{{ l }}",
                "{% set t = (1, 2) %}{{ t.count(1) }}{{ t.index(2) }}",
                "{% set t = (1, 2) %}{% do t.append(3) %}{{ t }}",
                "{{ [1, 2].__class__ }}", "{{ [].pop() }}",
                "{% set l = [1, 2, 3] %}{{ l|length }}{{ l.__len__() }}"]
for t in LIST_METHODS:
    add("list_methods", t)
DICT_METHODS = ["keys()", "values()", "items()", "get('a')", "get('z')", "get('z', 0)", "copy()",
                "pop('a')", "pop('z', 'd')", "pop('z')", "setdefault('z', 9)", "setdefault('a', 9)",
                "update({'z': 1})", "update(z=2)", "clear()", "popitem()", "keys()|list", "items()|list",
                "__contains__('a')", "get(1)", "get(True)", "fromkeys(['x'])", "values()|sum"]
DICTS = ["{'a': 1, 'b': 2}", "{}", "{1: 'one', True: 'true'}", "pillar.users", "{'b': 1, 'a': 2, 'c': 0}"]
for m in DICT_METHODS:
    for d in DICTS:
        add("dict_methods", "{%% set d = %s %%}{{ d.%s }}|{{ d }}" % (d, m))
for t in ["{% set d = {} %}{% do d.update({'k': 'v'}) %}{% for k, v in d.items() %}{{ k }}={{ v }}{% endfor %}",
          "{% set d = {'b': 1, 'a': 2} %}{% for k in d %}{{ k }}{% endfor %}",
          "{% set d = {'b': 1, 'a': 2} %}{% for k in d|sort %}{{ k }}{% endfor %}",
          "{% set d = {3: 'c', 1: 'a'} %}{% for k in d %}{{ k + 1 }}{% endfor %}",
          "{% set d = {3: 'c', 1: 'a'} %}{{ d[3] }}{{ d.get(1) }}",
          "{% set d = {(1, 2): 'tuple', None: 'none', True: 'bool', 2.5: 'float'} %}{{ d[(1, 2)] }}{{ d[None] }}{{ d[True] }}{{ d[2.5] }}{{ d }}",
          "{% set d = {1: 'int'} %}{% do d.update({True: 'bool'}) %}{{ d }}",
          "{% set d = {1.0: 'float'} %}{% do d.update({1: 'int'}) %}{{ d }}",
          "{% set d = {} %}{% do d.update({[1]: 2}) %}{{ d }}",
          "{{ {[1]: 2} }}", "{{ {{'a': 1}: 2} }}", "{{ dict(a=1, b=2) }}", "{{ dict({'a': 1}, b=2) }}",
          "{{ dict([('a', 1), ('b', 2)]) }}", "{% set d = dict(x=1) %}{{ d.x }}{{ d['x'] }}",
          "{% set d = {'a': 1} %}{{ d|length }}{{ d|list }}{{ d.items()|list }}",
          "{% set d = {'k': 1} %}{{ d.k is defined }}{{ d.z is defined }}{{ d['z'] is defined }}",
          "{% set d = {'items': 1, 'keys': 2} %}{{ d['items'] }}{{ d.keys }}",
          "{% set d = {'a': 1} %}{{ d.a.b }}", "{{ pillar.users.alice.uid + 1 }}",
          "{{ pillar.ports_by_number|dictsort }}", "{{ pillar.flags }}", "{{ pillar.flags|dictsort }}",
          "{{ pillar.ports_by_number.keys()|list }}", "{{ pillar.ports_by_number.get(22) }}",
          "{{ pillar.ports_by_number.get('22') }}", "{% for k, v in pillar.ports_by_number.items() %}{{ k * 2 }}:{{ v }} {% endfor %}"]:
    add("dict_methods", t)

# --- % formatting and str.format --------------------------------------------------
PCT = ["'%s'", "'%d'", "'%i'", "'%5d|'", "'%-5d|'", "'%05d'", "'%.2f'", "'%8.3f|'", "'%e'", "'%g'",
       "'%x'", "'%X'", "'%o'", "'%r'", "'%c'", "'%%'", "'%s%%'", "'%+d'", "'% d'", "'%10s|'", "'%-10s|'",
       "'%.3s'", "'%s %s'", "'%(a)s'", "'%(a)s-%(b)d'", "'%5.1f%%'", "'%a'", "'%u'"]
PCT_ARGS = ["1", "-2.5", "'str'", "None", "True", "[1, 2]", "(1,)", "(1, 2)", "{'a': 'A', 'b': 2}",
            "100000000000000000000", "'caf\u00e9'", "()", "65", "3.14159"]
for fmt in PCT:
    for a in rng.sample(PCT_ARGS, 6):
        add("formatting", "{{ %s %% %s }}" % (fmt, a))
FMT = ["'{}'.format(1)", "'{} {}'.format('a', 'b')", "'{1}{0}'.format('a', 'b')", "'{a}'.format(a=1)",
       "'{:>6}|'.format('x')", "'{:<6}|'.format('x')", "'{:^7}|'.format('x')", "'{:*^7}'.format('x')",
       "'{:.2f}'.format(3.14159)", "'{:,}'.format(1234567)", "'{:08.3f}'.format(-3.5)", "'{:x}'.format(255)",
       "'{:#x}'.format(255)", "'{:b}'.format(5)", "'{:o}'.format(8)", "'{:e}'.format(12345.678)",
       "'{:%}'.format(0.25)", "'{!r}'.format('x')", "'{!s}'.format(None)", "'{0[0]}'.format([7])",
       "'{0[k]}'.format({'k': 'v'})", "'{0.real}'.format(3)", "'{:d}'.format(2.5)", "'{}'.format()",
       "'{} {}'.format(1)", "'{z}'.format(a=1)", "'{{}}'.format()", "'{:>{w}}'.format('x', w=4)",
       "'{:+d}'.format(5)", "'{:=+6d}'.format(-5)", "'{}'.format([1, 'a'])", "'{}'.format({'a': None})",
       "'{}'.format(True)", "'{:d}'.format(True)", "'{:.3}'.format('abcdef')", "'{:10.3}|'.format(3.14159)",
       "'{:g}'.format(1e-10)", "'{:n}'.format(1234)", "'{:_}'.format(1000000)", "'{:c}'.format(97)",
       "'%s'|format('x')", "'%s-%s'|format(1, 2)", "'%(a)s'|format(a=1)", "'%d'|format('x')",
       "'{}'|format(1)", "'%.1f'|format(2.25)", "'%.1f'|format(2.35)", "'%.0f'|format(0.5)", "'%.0f'|format(1.5)",
       "'%s'|format(None)", "'%s'|format([None, True])", "'%5s|%-5s|'|format('a', 'b')"]
for e in FMT:
    add("formatting", "{{ %s }}" % e)

# --- loops ---------------------------------------------------------------------
LOOP_ATTRS = ["loop.index", "loop.index0", "loop.revindex", "loop.revindex0", "loop.first", "loop.last",
              "loop.length", "loop.cycle('a', 'b', 'c')", "loop.previtem", "loop.nextitem", "loop.depth",
              "loop.depth0", "loop.changed(x)", "loop.changed(x > 1)"]
LOOP_SEQS = ["[]", "['x']", "[1, 2, 2, 3]", "'abc'", "{'k': 1, 'j': 2}", "range(3)", "pillar.ports"]
for a in LOOP_ATTRS:
    for s in LOOP_SEQS:
        add("loops", "{%% for x in %s %%}[{{ %s }}]{%% else %%}empty{%% endfor %%}" % (s, a))
for t in ["{% for x in [1, 2, 3, 4] if x is even %}{{ loop.index }}/{{ loop.length }}:{{ x }} {% endfor %}",
          "{% for x in [1, 2] %}{% for y in 'ab' %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{% endfor %}",
          "{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
          "{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}",
          "{% for x in [1, 2, 3] %}{% if x == 9 %}{% break %}{% endif %}{% else %}no break{% endfor %}",
          "{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }} {% endfor %}",
          "{% for a, b in [(1, 2, 3)] %}{{ a }}{% endfor %}",
          "{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}",
          "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}",
          "{% for k, v in {'a': 1}|dictsort %}{{ k }}{{ v }}{% endfor %}",
          "{% for x in 5 %}{{ x }}{% endfor %}", "{% for x in None %}{{ x }}{% endfor %}",
          "{% for x in nope %}{{ x }}{% endfor %}", "{% for x in 'ab' %}{{ x }}{% endfor %}{{ x }}",
          "{% set x = 'outer' %}{% for x in [1] %}{{ x }}{% endfor %}{{ x }}",
          "{% set total = 0 %}{% for x in [1, 2] %}{% set total = total + x %}{% endfor %}{{ total }}",
          "{% set ns = namespace(total=0) %}{% for x in [1, 2] %}{% set ns.total = ns.total + x %}{% endfor %}{{ ns.total }}",
          "{% for x in [1, 2] %}{{ loop.cycle() }}{% endfor %}",
          "{% for x in range(3) recursive %}{{ x }}{% endfor %}",
          "{% for x in [[1, [2]], [3]] recursive %}[{% for y in x %}{% if y is iterable %}{{ loop(y) }}{% else %}{{ y }}{% endif %}{% endfor %}]{% endfor %}",
          "{% for i in [{'n': 'a', 'c': [{'n': 'b', 'c': [{'n': 'c', 'c': []}]}]}] recursive %}{{ loop.depth }}{{ i.n }}{{ loop(i.c) }}{% endfor %}",
          "{% for i in [{'n': 'a', 'c': [{'n': 'b', 'c': []}, {'n': 'd', 'c': []}]}] recursive %}<{{ i.n }}:{{ loop.depth0 }}:{{ loop.index }}{{ loop(i.c) }}>{% endfor %}",
          "{% for x in [3, 1, 2]|sort %}{{ x }}{% endfor %}", "{% for x in range(0) %}x{% else %}none{% endfor %}",
          "{% for x in range(2, 10, 3) %}{{ x }}{% endfor %}", "{% for x in range(5, 0, -2) %}{{ x }}{% endfor %}",
          "{{ range(3) }}", "{{ range(1, 4)|list }}", "{{ range(0) }}", "{{ range(1, 10, 0) }}",
          "{% for x in [1, 2, 3] %}{{ loop.previtem is defined }}{{ loop.nextitem is defined }} {% endfor %}",
          "{% for x in [1, 2] %}{% for y in [3, 4] %}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}",
          "{% for x in [1, 2] %}{% set outer = loop %}{% for y in [3] %}{{ outer.index }}{{ loop.index }}{% endfor %}{% endfor %}",
          "{% for x in [1, 2, 3] %}{{ loop.length - loop.index }}{% endfor %}",
          "{% for x in [1, 2, 3]|reverse %}{{ x }}{% endfor %}", "{% for x in {'a': 1}.values() %}{{ x }}{% endfor %}",
          "{% for x in pillar.users %}{{ x }}{% endfor %}", "{% for u, d in pillar.users|dictsort %}{{ u }}:{{ d.uid }} {% endfor %}",
          "{% for x in grains.ipv4 %}{{ loop.index }}={{ x }}{{ ',' if not loop.last }}{% endfor %}",
          "{% for x in [1, 2, 3] %}{{ loop }}{% endfor %}", "{{ loop }}",
          "{% for x in [1] %}{{ loop.revindex0 }}{{ loop.cycle(*['a']) }}{% endfor %}"]:
    add("loops", t)

# --- whitespace control under Salt's trim_blocks / lstrip_blocks settings -----------
WS = [
    "{% if True %}\nyes\n{% endif %}\n",
    "  {% if True %}\n  yes\n  {% endif %}\n",
    "a\n{% for x in [1, 2] %}\n  - {{ x }}\n{% endfor %}\nb\n",
    "a\n  {%- for x in [1, 2] %}\n  - {{ x }}\n  {%- endfor %}\nb\n",
    "a\n{% for x in [1, 2] -%}\n  - {{ x }}\n{% endfor -%}\nb\n",
    "{% set x = 1 %}\n{{ x }}\n",
    "  {% set x = 1 %}  \n{{ x }}\n",
    "{# comment #}\nafter\n",
    "  {# comment #}\nafter\n",
    "{%+ if True %}\n  kept\n  {%+ endif %}\n",
    "x {%- if True -%} y {%- endif -%} z\n",
    "{{ 'a' }}\n{{ 'b' }}\n",
    "{{- 'a' -}}\n\n  {{- 'b' }}\n",
    "{% macro m() %}\n  body\n{% endmacro %}\n[{{ m() }}]\n",
    "{% raw %}\n  {{ raw }}\n{% endraw %}\n",
    "list:\n{% for k, v in {'a': 1, 'b': 2}.items() %}\n  {{ k }}: {{ v }}\n{% endfor %}\n",
    "pkgs:\n  {% for p in ['vim', 'git'] %}\n  - {{ p }}\n  {% endfor %}\n",
    "{% if False %}\nno\n{% elif True %}\nelif\n{% else %}\nelse\n{% endif %}\n",
    "\t{% if True %}\ttab\n\t{% endif %}\n",
    "a {% if True %}inline{% endif %} b\n",
    "{% for x in [1] %}{% for y in [2] %}\n{{ x }}{{ y }}\n{% endfor %}\n{% endfor %}\n",
    "{% set block %}\n  content\n{% endset %}\n[{{ block }}]\n",
    "  {%- set x = 1 -%}  \n  {{ x }}\n",
    "line\n\n{% if True %}\n\n{% endif %}\n\nend\n",
    "{% filter upper %}\n  text\n{% endfilter %}\n",
    "{% call(x) m() %}x{% endcall %}\n",
    "{{ 'no newline at end' }}",
    "\n\n{{ 1 }}\n\n",
    "{% if True %}a{% endif %}\r\nwindows\r\n",
    "{% with a = 1 %}\n{{ a }}\n{% endwith %}\n",
    "{% do [].append(1) %}\nafter do\n",
    "   {% for x in [1] %}   x   {% endfor %}   \n",
]
WS_OPTS = [None, {"jinja_trim_blocks": True}, {"jinja_lstrip_blocks": True},
           {"jinja_trim_blocks": True, "jinja_lstrip_blocks": True},
           {"jinja_sls_env": {"trim_blocks": True, "lstrip_blocks": True}},
           {"jinja_sls_env": {"keep_trailing_newline": True}}]
for t in WS:
    for o in WS_OPTS:
        add("whitespace", t, opts=o)


# --- grammar-generated families (issue 11's thin spots) ---------------------------
# Each family draws templates from a small grammar with its own seeded
# generator, so adding a family leaves the others' cases unchanged.
g = random.Random(SEED + 11)
GVALS = ["0", "1", "-2", "3.5", "True", "False", "None", "'s'", "''", "'Ab c'", "[1, 'a']", "[]",
         "(2, 'b')", "()", "{'k': 1}", "{}", "2 ** 70", "-(2 ** 65)", "nope"]


def gval():
    return g.choice(GVALS)


def gsimple():
    return g.choice(["0", "1", "-2", "3.5", "True", "None", "'s'", "'Ab c'", "2 ** 70", "[1, 2]", "(1,)"])


# loop.cycle with several arities over several sequences, with loop attributes
for _ in range(120):
    seq = g.choice(["[1, 2, 3, 4, 5]", "'abcd'", "range(7)", "{'x': 1, 'y': 2, 'z': 3}", "[]", "pillar.ports", "(9, 8)"])
    cyc = ", ".join(g.choice(["'a'", "'b'", "1", "None", "x", "loop.index", "[1]", "'c'"]) for _ in range(g.randint(0, 4)))
    attr = g.choice(["", "{{ loop.index0 }}", "{{ loop.revindex }}", "{{ loop.first }}", "{{ loop.last }}", "{{ loop.length }}"])
    cond = g.choice(["", " if x", " if loop is defined", " if x != 2"])
    add("g_loop_cycle", "{%% for x in %s%s %%}[{{ loop.cycle(%s) }}%s]{%% else %%}E{%% endfor %%}" % (seq, cond, cyc, attr))


# recursive loops over generated trees
def gtree(depth):
    kids = [] if depth == 0 else [gtree(depth - 1) for _ in range(g.randint(0, 3))]
    return "{'n': %s, 'c': [%s]}" % (g.choice(["'a'", "'b'", "1", "None", "'x y'"]), ", ".join(kids))


RECBODIES = [
    "{{ loop.depth }}{{ i.n }}({{ loop(i.c) }})",
    "<{{ i.n }}:{{ loop.depth0 }}/{{ loop.index }}/{{ loop.length }}{% if i.c %}{{ loop(i.c) }}{% endif %}>",
    "{{ loop.cycle('-', '+') }}{{ i.n }}{{ loop(i.c)|upper }}",
    "{% if loop.first %}^{% endif %}{{ i.n }}{{ loop(i.c|reverse) }}{% if loop.last %}${% endif %}",
    "{{ i.n }}{% for j in i.c %}[{{ j.n }}]{% endfor %}{{ loop(i.c) }}",
    "{{ loop.previtem.n if loop.previtem is defined else '.' }}{{ i.n }}{{ loop(i.c) }}",
]
for _ in range(80):
    add("g_recursive", "{%% for i in [%s] recursive %%}%s{%% endfor %%}" % (gtree(g.randint(0, 3)), g.choice(RECBODIES)))

# call blocks: macros calling caller with positional and keyword arguments
MSIGS = ["", "a", "a, b=2", "a=1, b=none", "*args", "a, **kw"]
CSIGS = ["", "x", "x, y", "x, y=0", "x=1", "*rest", "x, **kw"]
CALLS = ["caller()", "caller(1)", "caller(1, 2)", "caller(y=5)", "caller(1, y=2)", "caller(*[1, 2])",
         "caller(a)", "caller(x=a)", "caller(z=1)", "caller(1, 2, 3)", "caller(**{'y': 'k'})", "caller(varargs)",
         "caller(kwargs)"]
for _ in range(150):
    msig = g.choice(MSIGS)
    args = ", ".join(g.choice(["1", "'m'", "a=3", "b=4", "[1]", "None"]) for _ in range(g.randint(0, 2)))
    if "a=3" in args and args.index("a=3") < len(args) - 3:
        args = args.replace("a=3, ", "")
    body = "|".join(g.choice(CALLS) for _ in range(g.randint(1, 2)))
    cbody = g.choice(["{{ x }}", "{{ x }}-{{ y }}", "{{ rest }}", "{{ kw }}", "{{ varargs }}", "{{ x|default('d') }}", "C"])
    add("g_callblocks", "{%% macro m(%s) %%}{{ %s }}{%% endmacro %%}{%% call(%s) m(%s) %%}%s{%% endcall %%}" % (msig, body.replace("|", " ~ '|' ~ "), g.choice(CSIGS), args, cbody))

# namespace
NSOPS = ["{% set ns.a = ns.a + 1 %}", "{% set ns.b = [ns.a] %}", "{% set ns.c = ns.a ~ 'x' %}",
         "{% for x in [1, 2] %}{% set ns.a = ns.a * 2 %}{% endfor %}", "{% if true %}{% set ns.d = 'in if' %}{% endif %}",
         "{% set ns.a = none %}", "{{ ns.a }}", "{{ ns.b }}", "{{ ns.missing }}", "{{ ns }}", "{{ ns.a is defined }}",
         "{% set ns.x, ns.y = 1, 2 %}", "{{ ns.x }}{{ ns.y }}", "{% with %}{% set ns.a = 9 %}{% endwith %}"]
for _ in range(100):
    init = g.choice(["a=1", "a=1, b=2", "{'a': 5}", "a=0, c='q'", "", "{'a': 1}, a=2"])
    add("g_namespace", "{%% set ns = namespace(%s) %%}%s|{{ ns.a|default('u') }}" % (init, "".join(g.choice(NSOPS) for _ in range(g.randint(1, 4)))))

# import (with/without context) and include (ignore missing, with/without context)
LIBS = {
    "lib/ctx.jinja": "{% set uses = local_var|default('no local') %}{% macro show() %}{{ local_var|default('none') }}{% endmacro %}{% macro g() %}{{ grains.os }}{% endmacro %}",
    "lib/strict.jinja": "{% set v = local_var %}{% macro m() %}{{ local_var }}{% endmacro %}",
    "lib/inc.jinja": "[inc {{ local_var|default('-') }} {{ grains.os }}]",
    "lib/inc2.jinja": "[inc2 {{ x|default('nox') }}]",
}
IMPORTS = ["{% import 'lib/ctx.jinja' as l %}", "{% import 'lib/ctx.jinja' as l with context %}",
           "{% import 'lib/ctx.jinja' as l without context %}", "{% from 'lib/ctx.jinja' import show, uses %}",
           "{% from 'lib/ctx.jinja' import show, uses with context %}", "{% from 'lib/strict.jinja' import m %}",
           "{% from 'lib/strict.jinja' import m with context %}", "{% import 'lib/strict.jinja' as s with context %}"]
USES = ["{{ l.uses }}", "{{ l.show() }}", "{{ l.g() }}", "{{ show() }}", "{{ uses }}", "{{ m() }}", "{{ s.v }}", "{{ l }}"]
INCLUDES = ["{% include 'lib/inc.jinja' %}", "{% include 'lib/inc.jinja' without context %}",
            "{% include 'lib/nope.jinja' ignore missing %}", "{% include ['lib/nope.jinja', 'lib/inc2.jinja'] %}",
            "{% include ['lib/nope.jinja', 'lib/no2.jinja'] ignore missing %}", "{% include 'lib/nope.jinja' ignore missing without context %}",
            "{% include ['lib/inc2.jinja'] ignore missing with context %}", "{% for x in [1, 2] %}{% include 'lib/inc2.jinja' %}{% endfor %}",
            "{% include 'lib/nope.jinja' %}", "{% include ('lib/inc' ~ '2.jinja') %}"]
for _ in range(120):
    pre = g.choice(["", "{% set local_var = 'L' %}", "{% set x = 'X' %}{% set local_var = 2 %}"])
    if g.random() < 0.5:
        t = pre + g.choice(IMPORTS) + "|" + g.choice(USES)
    else:
        t = pre + g.choice(INCLUDES) + "|" + g.choice(INCLUDES + ["end"])
    add("g_imports", t, files=LIBS)

# whitespace control: random tag sequences with -/+ modifiers under Salt's settings
WSTAGS = [("{%s if true %s}", "{%s endif %s}"), ("{%s for x in [1, 2] %s}", "{%s endfor %s}"),
          ("{%s set y %s}", "{%s endset %s}"), ("{%s filter upper %s}", "{%s endfilter %s}"),
          ("{%s with %s}", "{%s endwith %s}"), ("{%s macro mm() %s}", "{%s endmacro %s}{{ mm() }}")]


def wsmod():
    return g.choice(["", "", "-", "+"])


for _ in range(150):
    open_t, close_t = g.choice(WSTAGS)
    pad = lambda: g.choice(["", " ", "  ", "\n", "\n  ", "\t", " \n"])
    body = pad() + g.choice(["x", "{{ 'v' }}", "{{- 'v' -}}", "{# c #}", "{#- c -#}", "a\nb"]) + pad()
    t = pad() + open_t % ("%" + wsmod(), wsmod() + "%") + body + close_t % ("%" + wsmod(), wsmod() + "%") + pad() + "end\n"
    add("g_whitespace", t, opts=g.choice(WS_OPTS))

# filters and tests applied to undefined values (strict and lenient)
UFILTERS = ["default('d')", "d(none)", "default", "length", "count", "list", "first", "last", "join(',')",
            "string", "upper", "lower", "int", "float", "abs", "trim", "sort", "unique", "reverse",
            "tojson", "yaml", "json", "items", "dictsort", "sum", "min", "max", "random", "wordcount",
            "replace('a', 'b')", "selectattr('x')", "map('upper')", "batch(2)|list", "safe", "e",
            "center(5)", "format(1)", "indent", "title", "capitalize", "urlencode", "to_bool", "is_list",
            "yaml_encode", "quote", "regex_search('a')", "sequence", "to_num", "md5"]
UEXPRS = ["nope", "nope.attr", "pillar.nope", "grains['nope']", "{}.x", "[][0]|default(nope)"]
for _ in range(160):
    e = g.choice(UEXPRS)
    f = g.choice(UFILTERS)
    form = g.choice(["{{ %s|%s }}", "{{ (%s|%s) is defined }}", "{%% if %s|%s %%}T{%% endif %%}", "{{ %s is %s }}"])
    if form == "{{ %s is %s }}":
        f = g.choice(["defined", "undefined", "none", "string", "number", "sameas none", "iterable", "mapping", "true", "equalto 1", "in [1]"])
    add("g_undefined", form % (e, f), opts=g.choice([None, None, {"allow_undefined": True}]))

# every Salt filter applied to an undefined value, strict and lenient:
# Salt passes Jinja2's Undefined object to its Python functions, so what
# happens is each function's own (arity check, isinstance, str(), iteration)
SALT_FILTERS = {
    "append_dict_key_value": "('a', 1)", "avg": "", "base64_decode": "", "base64_encode": "",
    "check_whitelist_blacklist": "(whitelist=['a'])", "compare_dicts": "({})", "compare_lists": "([])",
    "contains_whitespace": "", "date_format": "('%Y')", "difference": "([1])", "exactly_n_true": "(1)",
    "exactly_one_true": "", "extend_dict_key_value": "('a', [1])", "file_hashsum": "", "filter_by_networks": "(['10.0.0.0/8'])",
    "flatten": "", "get_uid": "", "hmac": "('sha256', 'k')", "hmac_compute": "('k')", "human_to_bytes": "",
    "indent": "", "intersect": "([1])", "ip_host": "", "ipaddr": "", "ipv4": "", "ipv6": "", "ipwrap": "",
    "is_bin_file": "", "is_empty": "", "is_hex": "", "is_ip": "", "is_ipv4": "", "is_ipv6": "", "is_iter": "",
    "is_list": "", "is_text_file": "", "json_decode_dict": "", "json_decode_list": "", "json_encode_dict": "",
    "json_encode_list": "", "json_query": "('a')", "list_files": "", "mac_str_to_bytes": "", "max": "", "md5": "",
    "method_call": "('upper')", "min": "", "mysql_to_dict": "('id')", "network_hosts": "", "network_size": "",
    "path_join": "('a')", "quote": "", "rand_str": "", "random_hash": "", "regex_escape": "", "regex_match": "('a')",
    "regex_replace": "('a', 'b')", "regex_search": "('a')", "sequence": "", "set_dict_key_value": "('a', 1)",
    "sha1": "", "sha256": "", "sha512": "", "skip": "", "sorted_ignorecase": "", "str_to_num": "", "strftime": "('%Y')",
    "substring_in_list": "(['a'])", "symmetric_difference": "([1])", "to_bool": "", "to_bytes": "", "to_camelcase": "",
    "to_num": "", "to_snake_case": "", "tojson": "", "traverse": "('a')", "union": "([1])", "unique": "",
    "update_dict_key_value": "('a', {})", "uuid": "", "which": "", "yaml_dquote": "", "yaml_encode": "",
    "yaml_squote": "", "yaml": "", "json": "", "python": "", "xml": "", "load_yaml": "", "load_json": "", "load_text": "",
}
for name in sorted(SALT_FILTERS):
    for a in sorted({"", SALT_FILTERS[name]}):
        for opts in (None, {"allow_undefined": True}):
            add("g_undefined_salt", "{{ nope|%s%s }}" % (name, a), opts=opts)
            add("g_undefined_salt", "{{ (nope|%s%s) is defined }}" % (name, a), opts=opts)
            add("g_undefined_salt", "{%% if pillar.nope|%s%s %%}T{%% endif %%}" % (name, a), opts=opts)

# every filter (Jinja2's and Salt's) given an undefined value inside a
# container, or one passed on by another filter: what Python does with
# the element (==, hash(), str(), iteration, bool(), isinstance, repr)
# decides whether the strict or lenient Undefined raises, vanishes or
# comes out as itself
UNESTED = ["[nope]", "[1, nope]", "(nope,)", "{'a': nope}", "[[nope]]", "[{'a': nope}]", "[pillar.nope]",
           "nope|sequence", "[nope]|reverse", "[nope]|list", "[nope]|select", "[nope]|reject",
           "[nope]|map('sequence')", "[nope]|unique", "[nope]|sort", "{'a': nope}|dictsort", "{'a': nope}.values()"]
UNESTED_FILTERS = dict((f, a[0]) for f, a in FILTERS.items())
UNESTED_FILTERS.update(SALT_FILTERS)
UNESTED_FILTERS.update({"combinations": "(1)", "permutations": "(1)", "product": "([0])", "zip_longest": "('xy')",
                        "compress": "([1, 1])", "combinations_with_replacement": "(1)", "ipaddr": "", "flatten": ""})
# (upper, title and replace would change the object address Salt prints
# for an iterator, which the comparison cannot then normalize)
UNESTED_ITERS = ("|select", "|reject", "|map(", "|reverse")
for name in sorted(UNESTED_FILTERS):
    for w in UNESTED:
        if name in ("upper", "title", "replace") and any(i in w for i in UNESTED_ITERS):
            continue
        for opts in (None, {"allow_undefined": True}):
            add("g_undefined_nested", "{{ (%s)|%s%s }}" % (w, name, UNESTED_FILTERS[name]), opts=opts)

# Python str/list/dict methods with generated arguments
STRM = ["upper()", "lower()", "title()", "capitalize()", "swapcase()", "strip()", "strip('a')", "lstrip(' A')",
        "rstrip('c ')", "split()", "split(' ')", "split('b', 1)", "rsplit(None, 1)", "splitlines()", "startswith('A')",
        "endswith(('c', 'x'))", "find('b')", "rfind('b', 1)", "index('z')", "count('b')", "replace('b', 'B', 1)",
        "center(9, '*')", "ljust(6, '.')", "rjust(6)", "zfill(8)", "isdigit()", "isalpha()", "isspace()", "isupper()",
        "partition(' ')", "rpartition('b')", "join(['1', '2'])", "join([1])", "expandtabs(4)", "casefold()",
        "format(1)", "encode()", "removeprefix('A')", "removesuffix('c')", "translate({98: 'X'})", "upper", "__class__"]
STRS = ["'Ab c'", "''", "'  bb  '", "'abcabc'", "'12'", "'a\\tb\\nc'", "'ÄÖü'", "'b'"]
LISTM = ["append(4)", "extend([5, 6])", "insert(0, 'z')", "insert(-1, 9)", "pop()", "pop(0)", "pop(9)", "remove(1)",
         "remove(99)", "index(1)", "index('a', 1)", "count(1)", "reverse()", "sort()", "sort(reverse=true)", "clear()",
         "copy()", "sort(key=none)"]
LISTS = ["[1, 2, 1]", "[]", "[3, 'a', 1]", "['b', 'a']", "[[1], [0]]", "[None, 1]"]
DICTM = ["get('a')", "get('z', 0)", "keys()", "values()", "items()", "pop('a')", "pop('z')", "pop('z', 'd')",
         "setdefault('n', [])", "setdefault('a', 9)", "update({'c': 3})", "update(c=4)", "update([('d', 5)])",
         "popitem()", "copy()", "clear()", "fromkeys(['x'])", "get(1)", "get(True)", "has_key('a')"]
DICTS = ["{'a': 1, 'b': 2}", "{}", "{1: 'one', True: 'true'}", "{None: 0, (1, 2): 't'}", "{'a': [1]}"]
for _ in range(120):
    add("g_methods", "{{ %s.%s }}" % (g.choice(STRS), g.choice(STRM)))
for _ in range(80):
    add("g_methods", "{%% set l = %s %%}{%% set r = l.%s %%}{{ r }}|{{ l }}" % (g.choice(LISTS), g.choice(LISTM)))
for _ in range(80):
    add("g_methods", "{%% set d = %s %%}{%% set r = d.%s %%}{{ r }}|{{ d }}" % (g.choice(DICTS), g.choice(DICTM)))

# % formatting and str.format / format filter with generated specs
PCONV = ["s", "r", "d", "i", "x", "X", "o", "e", "f", "g", "G", "c", "%", "a", "u"]
PFLAGS = ["", "-", "+", " ", "0", "#", "-0", "+#"]
for _ in range(150):
    spec = "%" + g.choice(PFLAGS) + g.choice(["", "5", "10", "*"]) + g.choice(["", ".2", ".0", ".10"]) + g.choice(PCONV)
    args = g.choice([gsimple(), "(%s,)" % gsimple(), "(%s, %s)" % (gsimple(), gsimple()), "(5, %s)" % gsimple(),
                     "{'k': %s}" % gsimple(), "[]", "()"])
    fmt = g.choice(["'%s'", "'<%s>'", "'%s|%%(k)s'", "'%%(k)s %s'", "'%s %s'"]) % tuple([spec] * 1) if False else None
    fmt = "'<" + spec + ">'"
    if g.random() < 0.2:
        fmt = "'%(k)" + spec[1:] + "'"
    add("g_formatting", "{{ %s %% %s }}" % (fmt, args))
FSPECS = ["", ":>6", ":<4", ":^7", ":*^9", ":+d", ": d", ":05d", ":,", ":_", ":x", ":#x", ":#o", ":b", ":.3f",
          ":.2e", ":%", ":.1%", ":g", ":s", ":10s", "!r", "!s", "!a", ":=+8", ":c", ":n", ":.0f", ":,.2f"]
for _ in range(150):
    spec = g.choice(FSPECS)
    field = g.choice(["0", "", "x", "0[0]", "0.real", "1"])
    t = "'{" + field + spec + "}'"
    args = g.choice([gsimple(), "%s, %s" % (gsimple(), gsimple()), "x=%s" % gsimple(), "[%s]" % gsimple()])
    add("g_formatting", g.choice(["{{ %s.format(%s) }}", "{{ %s|format(%s) }}"]) % (t, args))


# big ints: generated arithmetic beyond int64
def gbig():
    return g.choice(["2 ** %d" % g.randint(60, 130), "-(2 ** %d)" % g.randint(60, 100), str(g.randint(-10**25, 10**25)),
                     "9223372036854775807", "-9223372036854775808", str(g.randint(-100, 100)), "1.5", "(10 ** 20)"])


for _ in range(150):
    op = g.choice(["+", "-", "*", "//", "%", "/", "**", "==", "<", ">=", "in [%s]" % gbig()])
    rhs = gbig() if not op.startswith("in") else ""
    if op == "**":
        rhs = str(g.randint(0, 5))
    e = "%s %s %s" % (gbig(), op, rhs)
    add("g_bigint", g.choice(["{{ %s }}", "{{ (%s)|string }}", "{{ (%s)|int }}", "{{ (%s)|abs }}", "{{ [%s]|tojson }}", "{{ '%%d' %% (%s) }}"]) % e)

# dict keys of every hashable type: literals, lookups, collisions (1 == True == 1.0)
HKEYS = ["1", "True", "1.0", "0", "False", "None", "'1'", "(1, 2)", "()", "(1, (2, 'a'))", "2 ** 70", "-1", "''", "0.5", "frozen"]
for _ in range(150):
    ks = [g.choice(HKEYS[:-1]) for _ in range(g.randint(1, 4))]
    d = "{" + ", ".join("%s: %d" % (k, i) for i, k in enumerate(ks)) + "}"
    look = g.choice(HKEYS)
    if look == "frozen":
        look = "[1]"
    form = g.choice(["{{ %s }}", "{{ %s|length }}", "{{ (%s).keys()|list }}", "{{ (%s)|dictsort }}",
                     "{{ (%s)[%s] }}", "{{ (%s).get(%s, 'no') }}", "{%% set d = %s %%}{%% do d.update({%s: 'u'}) %%}{{ d }}"])
    add("g_dictkeys", form % ((d, look) if form.count("%s") == 2 else (d,)))
    add("g_dictkeys", "{{ %s in %s }}|{{ %s|length }}" % (look, d, d))

# TypeErrors: operators between mismatched types
TOPS = ["+", "-", "*", "/", "//", "%", "**", "<", ">", "<=", "in", "~"]
for _ in range(150):
    add("g_typeerrors", "{{ %s %s %s }}" % (gval(), g.choice(TOPS), gval()))
for _ in range(60):
    add("g_typeerrors", g.choice(["{{ -%s }}", "{{ %s[0] }}", "{{ %s.x }}", "{{ %s() }}", "{{ %s|length }}", "{{ %s|int }}",
                                  "{{ %s|sum }}", "{{ %s|sort }}", "{{ %s|join }}", "{{ %s|first }}", "{{ %s|list }}",
                                  "{%% for i in %s %%}{{ i }}{%% endfor %%}"]) % gval())


# error reports inside imported and included templates, at generated lines
e = random.Random(SEED + 12)
ERRS = ["{{ missing_var }}", "{{ pillar.nope.deeper }}", "{% if %}x{% endif %}", "{{ 'a'|no_such_filter }}",
        "{% no_such_tag %}", "{{ 1 + }}", "{% endfor %}", "{{ salt['no.such_function']() }}", "{{ 1 / 0 }}",
        "{% for x in [1] %}{{ x.y.z }}{% endfor %}", "{{ [1][5] }}", "{% set a = {'k': 1} %}{{ a.k.j }}",
        "{{ 'x' is no_such_test }}", "{% macro m() %}{{ undefined_in_macro }}{% endmacro %}{{ m() }}"]
HOW = ["{%% include 'lib/err.jinja' %%}", "{%% import 'lib/err.jinja' as e %%}", "{%% from 'lib/err.jinja' import x %%}",
       "{%% import 'lib/err.jinja' as e with context %%}", "{%% include 'lib/mid.jinja' %%}"]
for _ in range(70):
    before = "".join("line %d\n" % i for i in range(e.randint(0, 7)))
    after = "".join("tail %d\n" % i for i in range(e.randint(0, 7)))
    lib = "".join("{# lib %d #}\n" % i for i in range(e.randint(0, 8))) + e.choice(ERRS) + "\n" + "".join("lib tail %d\n" % i for i in range(e.randint(0, 7)))
    files = {"lib/err.jinja": lib, "lib/mid.jinja": "mid\n{% include 'lib/err.jinja' %}\n"}
    main = "".join("main %d\n" % i for i in range(e.randint(0, 6))) + e.choice(HOW) % () + "\n" + "after\n"
    if e.random() < 0.3:
        files = {}
        main = before + e.choice(ERRS) + "\n" + after
    add("errreport", main, files=files or None)

# template inheritance (designer docs "Template Inheritance"): extends, blocks,
# super(), self.<block>(), nested, scoped and required blocks, multi-level
# and computed parents, what a child writes outside its blocks
h = random.Random(SEED + 13)
BASES = {
    "lib/b1.jinja": "head[{% block a %}A{% endblock %}]mid[{% block b %}B{{ v|default('') }}{% endblock %}]tail",
    "lib/b2.jinja": "<{% block outer %}o{% block inner %}i{% endblock %}O{% endblock %}>",
    "lib/b3.jinja": "{% for x in [1, 2] %}({% block item scoped %}{{ x }}{% endblock %}){% endfor %}{% block a %}{% endblock %}",
    "lib/b4.jinja": "{% block r required %}{% endblock %}|{% block a %}S{% endblock %}",
    "lib/b5.jinja": "{% block a %}T{% endblock %}={{ self.a() }}={% block b %}{{ self.a()|length }}{% endblock %}",
    "lib/mid.jinja": "{% extends 'lib/b1.jinja' %}{% block a %}midA({{ super() }}){% endblock %}",
    "lib/b6.jinja": "{% set inbase = 'base' %}{% block a %}{{ inbase }}{% endblock %}{% block b %}{{ loop is defined }}{% endblock %}",
}
BLOCKS = ["{%% block %s %%}X{%% endblock %%}", "{%% block %s %%}{{ super() }}+{%% endblock %%}",
          "{%% block %s %%}{{ super()|upper }}{%% endblock %%}", "{%% block %s %%}[{{ self.a() }}]{%% endblock %%}",
          "{%% block %s %%}{{ x|default('nox') }}{%% endblock %%}", "{%% block %s %%}{{ v|default('nov') }}{%% endblock %%}",
          "{%% block %s %%}{{ super() }}{{ super() }}{%% endblock %%}", "{%% block %s %%}{%% endblock %%}",
          "{%% block %s -%%}\n  ws\n{%%- endblock %%}", "{%% block %s %%}{{ inbase|default('nb') }}{%% endblock %%}",
          "{%% block %s %%}{{ grains.os }}/{{ pillar.count|default(0) }}{%% endblock %%}"]
NAMES = {"lib/b1.jinja": ["a", "b"], "lib/b2.jinja": ["outer", "inner"], "lib/b3.jinja": ["item", "a"],
         "lib/b4.jinja": ["r", "a"], "lib/b5.jinja": ["a", "b"], "lib/mid.jinja": ["a", "b"], "lib/b6.jinja": ["a", "b"]}
OUTSIDE = ["", "ignored text", "{% set v = 5 %}", "{{ 'ignored' }}", "{% set x = 'child' %}", "{% macro mm() %}m{% endmacro %}",
           "{% if true %}not shown{% endif %}", "{% for i in [1] %}{% set v = 9 %}{% endfor %}"]
for _ in range(110):
    base = h.choice(sorted(BASES))
    names = NAMES[base]
    parts = [h.choice(OUTSIDE)]
    ext = h.choice(["{%% extends '%s' %%}" % base, "{%% set parent = '%s' %%}{%% extends parent %%}" % base,
                    "{%% extends '%s' %%}" % base])
    parts.append(ext)
    used = set()
    for _ in range(h.randint(0, 2)):
        n = h.choice(names)
        if n in used and h.random() < 0.8:
            continue
        used.add(n)
        parts.append(h.choice(BLOCKS) % n)
        parts.append(h.choice(OUTSIDE))
    add("g_inheritance", "".join(parts), files=BASES)
for t in ["{% extends 'lib/b1.jinja' %}{% extends 'lib/b2.jinja' %}",
          "{% block a %}1{% endblock %}{% block a %}2{% endblock %}",
          "{% block a %}{{ super() }}{% endblock %}",
          "{% extends 'lib/nope.jinja' %}",
          "{% if false %}{% extends 'lib/b1.jinja' %}{% endif %}body",
          "{% if true %}{% extends 'lib/b1.jinja' %}{% endif %}body",
          "{% extends none %}plain",
          "{% extends ['lib/nope.jinja', 'lib/b1.jinja'] %}",
          "{% block a %}{% block a2 %}n{% endblock %}{% endblock %}{{ self.a2() }}",
          "{% extends 'lib/b4.jinja' %}",
          "{% extends 'lib/b4.jinja' %}{% block r %}R{% endblock %}",
          "{% block r required %}{% endblock %}",
          "{% block r required %}x{% endblock %}",
          "{% extends 'lib/b3.jinja' %}{% block item %}<{{ x }}>{% endblock %}",
          "{% extends 'lib/b1.jinja' %}{% block c %}not in base{% endblock %}",
          "{{ self }}", "{{ self.nope() }}", "{% block a %}A{% endblock %}{{ self.a() }}{{ self.a() }}"]:
    add("g_inheritance", t, files=BASES)

# markupsafe.Markup (designer docs "HTML Escaping"): what |e, |safe,
# |forceescape and Salt's json/yaml/python filters return, how Markup
# survives concatenation, repetition, %-formatting, format, str methods and
# filters, and what autoescape blocks print
mk = random.Random(SEED + 14)
MSRC = ["('<a>'|e)", "('<b>'|safe)", "('&x'|forceescape)", "(['<', 1]|json)", "({'k': '<v>'}|yaml)",
        "('x'|e)", "(\"'q'\"|e)", "(('<a>'|e)|e)", "('a b'|safe)"]
PLAIN = ["'<i>'", "'&'", "'x'", "'a b'", "1", "none", "[1, '<']"]
MOPS = ["{m} + {p}", "{p} + {m}", "{m} ~ {p}", "{p} ~ {m}", "{m} * 2", "2 * {m}", "{m} + {m}",
        "{m}|upper", "{m}|lower", "{m}|capitalize", "{m}|title", "{m}|string", "{m}|reverse", "{m}|e",
        "{m}|forceescape", "{m}|safe", "{m}|length", "{m}|trim", "{m}|center(9)", "{m}|replace('a', '<')",
        "{m}|first", "{m}|last", "{m}|list", "{m}|join('<')", "[{m}, {p}]|join('|')", "{m}|format({p})",
        "{m}|indent(2)", "{m}|truncate(3, true, '<')", "{m}|striptags", "{m}|wordcount", "{m}|default('d')",
        "{m} is escaped", "({m}|upper) is escaped", "({m}|title) is escaped", "({m} ~ '') is escaped",
        "({m} + '') is escaped", "{m}[0]", "{m}[1:]", "{m}[::-1]", "{m}.upper()", "{m}.strip()",
        "{m}.split()", "{m}.replace('a', {p})", "{m}.join([{p}, {p}])", "{m}.partition('<')",
        "{m}.format({p})", "{m}.unescape()", "{m}.striptags()", "{m}.startswith('&')", "{m}.count('&')",
        "{m} == {p}", "{m} in {p}|string", "'a' in {m}", "[{m}]", "({m},)", "{{'k': {m}}}", "{{{m}: 1}}",
        "{m} % {p}", "('%s|%r' % ({m}, {m}))", "'%s' % {m}", "{m}|int", "{m}|float", "{m}|sort", "{m}|unique|list",
        "{m}.__html__()", "'{{}}'.format({m})", "{m}|tojson", "[{m}]|sequence", "{m}|sequence", "{m}|is_list",
        "{m}|to_bool", "{m}|yaml", "{m}|json", "{m}|python"]
MWRAP = ["{{{{ {e} }}}}", "{{% autoescape true %}}{{{{ {e} }}}}{{% endautoescape %}}",
         "{{% autoescape false %}}{{{{ {e} }}}}{{% endautoescape %}}"]
for _ in range(220):
    m = mk.choice(MSRC)
    p = mk.choice(PLAIN)
    e = mk.choice(MOPS).format(m=m, p=p)
    add("g_markup", mk.choice(MWRAP).format(e=e))
for t in ["{% autoescape true %}{% set x %}<b>{% endset %}{{ x }}|{{ x is escaped }}|{{ x ~ '<' }}{% endautoescape %}",
          "{% autoescape true %}{% macro m(a) %}<{{ a }}>{% endmacro %}{{ m('&') }}|{{ m('&') is escaped }}{% endautoescape %}",
          "{% autoescape true %}{% macro m() %}<i>{% endmacro %}{% endautoescape %}{{ m() is escaped }}|{{ m() ~ '&' }}",
          "{% autoescape true %}{% filter upper %}<b>{{ '<i>' }}{% endfilter %}{% endautoescape %}",
          "{% autoescape true %}{{ '<a>' ~ ('<b>'|safe) }}|{{ '<a>' ~ '<b>' }}{% endautoescape %}",
          "{% autoescape true %}{{ ['<a>', '<b>'|safe]|join('&') }}|{{ ['<a>', 'b']|join('&') }}{% endautoescape %}",
          "{% autoescape true %}{{ '<a>'|replace('a', '&') }}|{{ ('<a>'|safe)|replace('a', '&') }}|{{ '<a>'|replace('a', '&'|safe) }}{% endautoescape %}",
          "{% autoescape true %}{{ {'a': '<'|safe} }}|{{ ['<'|e] }}{% endautoescape %}",
          "{% autoescape true %}{% for x in ['<', '<'|safe] %}{{ x }}{{ loop.cycle('<', '>'|safe) }}{% endfor %}{% endautoescape %}",
          "{% set v = '<'|e %}{% autoescape true %}{{ v }}{{ v + '>' }}{{ v|upper }}{{ v.lower() }}{% endautoescape %}",
          "{{ ('<a>'|e).__html__() }}", "{{ ('<%s>'|safe) % '&' }}|{{ ('<%(k)s>'|safe) % {'k': '&'} }}",
          "{{ ('{0}<{1}>'|safe).format('&', '<'|safe) }}|{{ ('{:>3}'|safe).format('x') }}",
          "{{ ('{0!r}'|safe).format('&') }}|{{ ('{0!s}'|safe).format('<'|safe) }}",
          "{{ ('%d|%.1f'|safe) % ('3', '2.5') }}", "{{ ('%x'|safe) % 3 }}",
          "{{ ('a'|e) - 1 }}", "{{ 1 + ('a'|e) }}", "{{ ('a'|e) * 'b' }}", "{{ ('a'|e) * true }}",
          "{{ ('a'|e) < 'b' }}|{{ ('b'|e) > ('a'|e) }}|{{ ['b'|e, 'a']|sort }}|{{ ['b'|e, 'a']|max }}"]:
    add("g_markup", t)

# {% extends %} inside a top-level if (a soft frame: the parent is chosen
# at run time and the output after it is skipped) and in the scopes where
# Jinja2's compiler refuses it
xi = random.Random(SEED + 15)
XCOND = ["true", "false", "pillar.count", "pillar.nothing", "grains.os == 'Debian'", "v is defined"]
XPRE = ["", "pre ", "{% set v = 1 %}", "{{ 'printed' }}", "{% block a %}childA{% endblock %}"]
XPOST = ["", "post", "{{ 'after' }}", "{% set v = 2 %}{{ v }}", "{% block b %}childB{{ v|default('') }}{% endblock %}",
         "{% if true %}in-if{% endif %}", "{% for i in [1] %}f{{ i }}{% endfor %}", "{% extends 'lib/b2.jinja' %}"]
for _ in range(60):
    ext = "{%% extends '%s' %%}" % xi.choice(["lib/b1.jinja", "lib/b2.jinja", "lib/mid.jinja"])
    shape = xi.choice(["{%% if %s %%}%s{%% endif %%}", "{%% if %s %%}x{%% else %%}%s{%% endif %%}",
                       "{%% if %s %%}{%% elif true %%}%s{%% endif %%}", "{%% if %s %%}{%% autoescape true %%}%s{%% endautoescape %%}{%% endif %%}"])
    body = shape % (xi.choice(XCOND), xi.choice(["", "in "]) + ext + xi.choice(["", " tail"]))
    add("g_inheritance", xi.choice(XPRE) + body + xi.choice(XPOST) + xi.choice(XPOST), files=BASES)
for t in ["{% for x in [1] %}{% extends 'lib/b1.jinja' %}{% endfor %}",
          "{% macro m() %}{% extends 'lib/b1.jinja' %}{% endmacro %}x",
          "{% block a %}{% extends 'lib/b1.jinja' %}{% endblock %}",
          "{% with %}{% extends 'lib/b1.jinja' %}{% endwith %}",
          "{% filter upper %}{% extends 'lib/b1.jinja' %}{% endfilter %}",
          "{% set x %}{% extends 'lib/b1.jinja' %}{% endset %}",
          "{% autoescape true %}{% extends 'lib/b1.jinja' %}{% endautoescape %}body",
          "{% if true %}{% if true %}{% extends 'lib/b1.jinja' %}{% endif %}{% endif %}body",
          "{% if true %}{% extends 'lib/b1.jinja' %}{% endif %}{% if true %}{% extends 'lib/b2.jinja' %}{% endif %}",
          "{% if true %}{% extends 'lib/b1.jinja' %}{% endif %}{% macro m() %}in macro{% endmacro %}{% block a %}{{ m() }}{% endblock %}",
          "a{% if true %}{% extends 'lib/b1.jinja' %}{% endif %}{% include 'lib/b2.jinja' %}"]:
    add("g_inheritance", t, files=BASES)

# every filter given an iterator object (generator, reversed list, dict
# view, range) or nested tuples of ordinary values: Salt's Python code goes
# by the object's type (isinstance, hashability, iter()), consumes a
# one-shot iterator or returns it untouched, and returns tuple items as
# tuples; the second form shows whether the filter consumed the iterator
IVALUES = ["[1, 2]|select", "[3, 1]|reverse", "['a', 'b']|map('upper')", "{'a': 1, 'b': 2}.values()",
           "{'a': 1, 'b': 2}.keys()", "{'a': 1, 'b': 2}.items()", "range(3)", "[(1, 2), ('a', 'b')]",
           "{'a': (1, 2)}", "[[1, (2, 3)], 'x']", "['10.0.0.1', 'fe80::1']|select", "(('a', 1),)"]
IV_ITERS = UNESTED_ITERS + (".values()", ".keys()", ".items()", "range(")
for name in sorted(UNESTED_FILTERS):
    if name in ("rand_str", "random_hash"):
        continue
    for w in IVALUES:
        if name in ("upper", "title", "replace") and any(i in w for i in UNESTED_ITERS):
            continue
        add("g_iter_values", "{{ (%s)|%s%s }}" % (w, name, UNESTED_FILTERS[name]))
        if any(i in w for i in IV_ITERS):
            add("g_iter_values", "{%% set it = %s %%}{%% set r = it|%s%s %%}{{ it|list }}" % (w, name, UNESTED_FILTERS[name]))

# partial reads of one-shot iterators, then the same iterator read again:
# a source generator (or a lazy filter over it: batch, map, select, ...)
# read only part of the way (first, in, exactly_*_true, a for loop left by
# break, loop.last/nextitem/length peeking ahead), then the rest listed;
# Python's lazy filters leave exactly the items they did not take
IP_SOURCES = ["[1, 2, 3, 4, 5]|select", "['a', 'b', 'c', 'd', 'e']|map('upper')", "[0, 1, 2, 0, 3]|reject('none')",
              "[5, 4, 3, 2, 1]|reverse", "[{'a': 1}, {'a': 0}, {'a': 2}, {'a': 3}]|selectattr('a')",
              "{'a': 1, 'b': 0, 'c': 3}.values()|select('ge', 0)"]
IP_LAZY = ["", "|batch(2)", "|batch(2, 'x')", "|map('string')", "|select", "|reject('none')", "|slice(2)", "|unique",
           "|compress([1, 0, 1, 1])", "|zip_longest('ab')", "|reverse"]
IP_READERS = ["{{ X|first }}", "{% for v in X %}{{ v }}{% break %}{% endfor %}",
              "{% for v in X %}{{ v }}{% if loop.index == 2 %}{% break %}{% endif %}{% endfor %}",
              "{% for v in X %}{{ loop.last }}{% break %}{% endfor %}",
              "{% for v in X %}{{ loop.nextitem }}{% break %}{% endfor %}",
              "{% for v in X %}{{ loop.length }}{% break %}{% endfor %}",
              "{{ X|exactly_one_true }}", "{{ X|exactly_n_true(2) }}", "{{ 'C' in X }}|{{ 3 in X }}",
              "{{ X|first }}{{ X|first }}"]
for src in IP_SOURCES:
    for lazy in IP_LAZY:
        for rd in IP_READERS:
            add("g_iter_partial", "{%% set it = %s %%}%s|{{ it|list }}" % (src, rd.replace("X", "it" + lazy)))
            if lazy:
                add("g_iter_partial", "{%% set it = %s %%}{%% set g = it%s %%}%s|{{ g|list }}|{{ it|list }}" % (src, lazy, rd.replace("X", "g")))

# dict keys of every hashable type (tuples, bools, None, ints, floats, big
# ints, and keys Python's dict merges: 1 == 1.0 == True, 0 == False == 0.0,
# 2 ** 64 == 2.0 ** 64) through every filter (Jinja2's and Salt's, which
# build, sort, group, dedup or serialise mappings), through dict(),
# methods, loops, attribute lookups by digit ('1' looks up the key 1) and
# comparisons: what each Python consumer does with the key object
DK_DICTS = ["{(1, 2): 'a', 'b': 1}", "{(1, ('x', 2)): 1}", "{True: 'b', 'k': 2}", "{False: 0, None: 1}",
            "{None: 'n'}", "{1: 'i', 2: 'j'}", "{1.5: 'f', 0.5: 'g'}", "{2 ** 70: 'big', 1: 's'}",
            "{1: 'i', True: 'b', 1.0: 'f'}", "{0: 'z', False: 'f', 0.0: 'fl', '0': 's'}", "{(): 'e', (1,): 'one'}",
            "{'b': 1, 2: 'a', None: 'n', (1,): 't'}", "{2 ** 64: 'i', 18446744073709551616.0: 'f'}",
            "{-1: 'm', -2: 'n', 'a': {(1, 2): None}}"]
DK_SKIP = ("rand_str", "random_hash")
for name in sorted(UNESTED_FILTERS):
    if name in DK_SKIP:
        continue
    args = sorted(set([UNESTED_FILTERS[name]] + FILTERS.get(name, [])))
    for d in DK_DICTS:
        if name == "compare_dicts" and "None:" in d:
            # set(new).union(old) orders None by its address-based hash
            continue
        for a in args:
            add("g_dictkey_filters", "{{ (%s)|%s%s }}" % (d, name, a))
# the dict one level down: serialisers and filters walking nested data
DK_NESTED = ["tojson", "json", "json(sort_keys=False)", "yaml", "yaml(False)", "yaml_encode", "python", "pprint", "xml",
             "json_encode_dict", "json_encode_list", "json_query('[*]')", "json_query('*')", "flatten", "unique|list",
             "dict_to_sls_yaml_params", "traverse('o:1')", "string", "list", "sort", "first", "sequence", "to_bool",
             "compare_dicts({'o': {}})", "update_dict_key_value('o', {True: 9})", "set_dict_key_value('o:1', 'v')",
             "append_dict_key_value('x', 1)", "extend_dict_key_value('x', [1])"]
for d in DK_DICTS:
    for f in DK_NESTED:
        add("g_dictkey_nested", "{{ ({'o': %s})|%s }}" % (d, f))
        add("g_dictkey_nested", "{{ [%s, %s]|%s }}" % (d, d, f))
# consumers other than filters: dict(), methods, loops, tests, lookups
DK_FORMS = ["{{ dict(D) }}", "{{ dict(D, k=1) }}", "{{ dict(D.items()) }}", "{{ dict(D|dictsort) }}", "{{ D.copy() }}",
            "{% set d = {'1': 'x', 1: 'y', 'k': 0} %}{% do d.update(D) %}{{ d }}", "{% set d = D %}{% do d.update({True: 'u', 0.0: 'z'}) %}{{ d }}",
            "{% set d = D %}{{ d.setdefault(1.0, 's') }}|{{ d }}", "{% set d = D %}{{ d.pop(True, 'p') }}|{{ d }}",
            "{% set d = D %}{{ d.pop((1, 2), 'p') }}|{{ d.popitem() }}|{{ d }}",
            "{% for k, v in D.items() %}{{ k }}={{ v }};{% endfor %}", "{% for k in D %}{{ k|string }}/{{ k is number }};{% endfor %}",
            "{% for k, v in D|dictsort %}{{ k }}{% endfor %}", "{{ D.keys()|list }}|{{ D.values()|list }}",
            "{{ D.get(1) }}|{{ D.get(True) }}|{{ D.get(1.0) }}|{{ D.get(0) }}|{{ D.get(None) }}|{{ D.get((1, 2)) }}",
            "{{ 1 in D }}|{{ False in D }}|{{ (1, 2) in D }}|{{ 2 ** 70 in D }}|{{ (1,) in D }}",
            "{{ D == dict(D) }}|{{ D == {} }}|{{ D != {1.0: 'i'} }}", "{{ D.keys()|unique|list }}",
            "{{ (D.keys()|list + [1, True, 1.0, 0, False, None, (1, 2)])|unique|list }}",
            "{{ (D.keys()|list + [1, True, 1.0, 0, False, None, (1, 2)])|unique(case_sensitive=true)|list }}",
            "{{ D.keys()|sort }}", "{{ D.keys()|map('string')|sort }}", "{{ D.keys()|min }}", "{{ D.keys()|max }}",
            "{{ D.keys()|list|tojson }}", "{{ D.keys()|list|json }}", "{{ D.keys()|list|yaml }}", "{{ D.keys()|list|python }}",
            "{{ [D, D]|map(attribute='1')|list }}", "{{ [D, D]|map(attribute='0')|list }}",
            "{{ [D, {1: 'z'}]|sort(attribute='1') }}", "{{ [D, {1: 'z'}]|unique(attribute='1')|list }}",
            "{{ [D, {1: 'z'}]|min(attribute='1') }}", "{{ [D, {1: 'z'}]|max(attribute='1') }}",
            "{{ [D, {1: 'z'}]|groupby('1') }}", "{{ [D, {0: 'z'}]|groupby('0') }}", "{{ [D, {1: 'z'}]|selectattr('1')|list }}",
            "{{ [D, {1: 2}]|rejectattr('1', 'string')|list }}", "{{ [D, {1: 2}]|sum(attribute='1') }}",
            "{{ [{'a': D}, {'a': D}]|groupby('a') }}", "{{ [{'a': (1, 2)}, {'a': (1, 2)}, {'a': [1, 2]}]|groupby('a') }}",
            "{{ D|dictsort(by='value') }}", "{{ D|dictsort(false, 'key', true) }}",
            "{% set ns = namespace(d=D) %}{% for k in D %}{% set ns.d = dict(ns.d, x=k) %}{% endfor %}{{ ns.d }}",
            "{{ D|items|map('first')|list }}", "{{ D|list|first }}", "{{ D|string|length }}", "{{ (D|tojson|load_json) }}",
            "{{ (D|json|load_json) }}", "{{ (D|yaml|load_yaml) }}", "{{ D is mapping }}|{{ D|length }}|{{ D|count }}"]
for d in DK_DICTS:
    for form in DK_FORMS:
        add("g_dictkey_forms", form.replace("D", "(%s)" % d))

# json_query (Python's jmespath on the template's objects) over dicts with
# several keys in an insertion order that is not sorted: `*`, keys(),
# values(), merge(), multiselect hashes, sort_by/max_by/min_by ties, ints
# against floats, nulls, keys that are not str, tuples and Markup inside,
# and the errors (parse, lexer, unknown function, arity, invalid type)
JQ_DATA = [
    "{'zeta': 3, 'alpha': 1.0, 'mid': None, 'beta': -2, 'k': 'v'}",
    "{'b': {'y': 1, 'x': 2}, 'a': {'d': 5, 'c': 4}, 'c': {'z': 0, 'a': [1, 2]}}",
    "{'people': [{'name': 'zed', 'age': 30, 'w': 1.5}, {'name': 'amy', 'age': 30, 'w': 2},"
    " {'name': 'bob', 'age': 25, 'w': 1.5}, {'name': 'cy', 'age': 25.0, 'w': 2.0}], 'tags': {'z': 'last', 'a': 'first', 'm': None}}",
    "{'n': [3, 1.0, 2, 1, 2.0], 's': ['b', 'a', 'c', 'a'], 'm': [1, 'a'], 'e': [], 'o': {}, 'f': 0.5, 'z': 0, 't': True}",
    "{'x': {'q': [1, 2], 'p': [3]}, 'w': {'q': [4], 'p': []}, 1: 'intkey', (1, 2): 'tuple', True: 'bool', None: 'none'}",
    "[{'k': 2, 'a': 1}, {'a': 3, 'k': 1}, {'k': 2, 'a': 0}, {'k': 1.0, 'a': 'x'}]",
    "{'t': (1, 2), 'mk': '<b>'|e, 'big': 2 ** 70, 'inf': 1e300 * 1e10, 'l': [(1, 2), [3, 4]], 'u': 'caf\u00e9'}",
    "pillar.apache", "pillar.users",
]
JQ_EXPRS = [
    "@", "*", "[*]", "*.*", "*[]", "*[*]", "values(@)[]", "keys(@)", "values(@)", "to_array(@)", "length(@)", "type(@)",
    "to_string(@)", "sort(keys(@))", "reverse(keys(@))", "keys(@)[0]", "values(@)[-1]", "values(@)[1:]", "values(@)[::-1]",
    "merge(@, `{\"a\": 9, \"zz\": 0}`)", "merge(`{\"b\": 1, \"k\": 2}`, @)", "merge(@)", "merge(@, @)",
    "{b: b, a: a}", "{zeta: zeta, alpha: alpha, nope: nope}", "{k: k, a: a, k: alpha}", "[b, a, zeta, alpha]",
    "*.{y: y, x: x, c: c}", "*.keys(@)", "*.length(@)", "values(@)[*].to_string(@)", "map(&type(@), values(@))",
    "map(&to_number(@), values(@))", "not_null(nope, mid, zeta, b)", "contains(keys(@), 'k')", "contains(values(@), `1`)",
    "values(@)[?@ == `1`]", "values(@)[?@ > `0`]", "values(@)[?type(@) == 'number']", "values(@) | [0]", "* | [0]",
    "sort_by(people, &age)[*].name", "sort_by(people, &w)[*].name", "max_by(people, &age).name", "min_by(people, &age).name",
    "max_by(people, &w).name", "min_by(people, &w).name", "people[?age > `26`].name", "people[?w == `1.5`]",
    "people[*].{n: name, a: age}", "people[*].[age, name]", "tags.*", "keys(tags)", "values(tags)", "tags | merge(@, {k: 'v'})",
    "sort_by(@, &k)", "sort_by(@, &a)", "max_by(@, &k)", "min_by(@, &k)", "[*].a", "[?k == `2`]", "@[*].keys(@)",
    "avg(n)", "sum(n)", "max(n)", "min(n)", "max(s)", "sort(n)", "sort(s)", "sort(m)", "join(',', s)", "join(',', n)",
    "abs(beta)", "abs(f)", "ceil(f)", "floor(alpha)", "ceil(`1.5`)", "to_number('1e3')", "to_number('12')", "to_number(' 7 ')",
    "length(t)", "type(t)", "t[0]", "t", "mk", "length(mk)", "type(mk)", "to_string(mk)", "big", "to_string(big)", "abs(big)",
    "inf", "to_string(inf)", "l[]", "l[*][0]", "to_string(t)", "u", "reverse(u)", "starts_with(u, 'ca')",
    "x.*", "*.q", "*.q[]", "x | keys(@)", "`[1, 2.0, 3.5]`", "`{\"z\": 1, \"a\": 2}`", "`{\"z\": 1, \"a\": 2}` | keys(@)",
    "'raw'", "!t", "!zeta", "!z", "zeta || alpha", "mid || beta", "mid && beta", "zeta == `3.0`", "t == t",
    "z == `false`", "t == `true`", "zeta < 'a'",
    # errors
    "length(`1`)", "nope(@)", "keys(`[1]`)", "sort_by(people, &tags)", "abs('x')", "a.[", "foo[", "`{bad", "foo =",
    "\"a\"(@)", "length(@, @)", "not_null()", "values(`1`)", "max_by(@, &nope)", "join(`1`, s)", "-", "",
]
for d in JQ_DATA:
    for e in JQ_EXPRS:
        add("g_json_query", "{{ (%s)|json_query(%s) }}" % (d, repr(e)))
JQ_IDENT = ["{%% set d = %s %%}{%% set r = d|json_query('*') %%}{%% do r.append(9) %%}{{ r }}|{{ d }}",
            "{%% set d = %s %%}{%% set r = d|json_query('values(@)[0]') %%}{{ r is mapping }}{%% if r is mapping %%}{%% do r.update({'new': 1}) %%}{%% endif %%}|{{ d }}",
            "{%% set d = %s %%}{{ d|json_query('[@, @]')|tojson }}",
            "{%% set d = %s %%}{{ d|json_query('{first: keys(@)[0], last: keys(@)[-1], n: length(@)}') }}"]
for d in JQ_DATA:
    for f in JQ_IDENT:
        add("g_json_query", f % d)

cases.sort(key=lambda c: (c["category"], c["id"]))
with open(os.path.join(corpus, "cases.json"), "w", encoding="utf-8") as f:
    f.write("[\n")
    f.write(",\n".join(json.dumps(c, ensure_ascii=False, sort_keys=True) for c in cases))
    f.write("\n]\n")
print("cases:", len(cases))
