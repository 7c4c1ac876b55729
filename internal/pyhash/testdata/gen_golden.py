"""Writes golden.json: hashlib.new(name, data).hexdigest() for each name
and input pyhash supports, as CPython computes them."""
import hashlib
import json
import sys

NAMES = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512",
         "sha3_224", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"]
INPUTS = ["", "abc", "salt\n" * 1000, "\u00e9t\u00e9"]

out = {"inputs": INPUTS, "digests": {}}
for name in NAMES:
    out["digests"][name] = [hashlib.new(name, s.encode("utf-8")).hexdigest() for s in INPUTS]
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
    f.write("\n")
