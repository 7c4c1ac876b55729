// Package py holds the pieces of Python behaviour that Salt's code relies
// on and that several gsalt packages need, each written once and pinned to
// CPython by golden tests (testdata/golden.json, made by gen_golden.py with
// /usr/bin/python3):
//
//   - fnmatch.fnmatch / fnmatchcase / translate (Fnmatch, CompileFnmatch,
//     FnmatchTranslate)
//   - str.splitlines and bytes.splitlines (SplitLines, SplitLinesBytes)
//   - == on decoded values (Equal)
//   - what "for x in v" visits (Iter)
//   - str.format and format(v, spec) (Formatter, FormatSpec)
//   - textwrap.fill (Fill)
//   - shlex.split and shlex.quote (ShlexSplit, ShlexQuote; their cases are
//     testdata/shlex_cases.json, made golden by gen_shlex.py)
//
// Values follow the data model of internal/pyfmt: nil (None), bool,
// string, []byte, Go integers and floats, *big.Int, time.Time (a naive
// datetime), lists and dicts (*payload.Map and Go maps).
package py
