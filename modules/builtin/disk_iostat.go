package builtin

// This file is disk.iostat of Salt's disk module (salt/modules/disk.py)
// on Linux: Salt runs sysstat's "iostat -x INTERVAL COUNT" (or "iostat
// -xd ... DISKS") and averages each column over the reports, rounded to
// two decimals half-even, per "avg-cpu:" block ("sys") and per device of
// a "Device:" block. Newer sysstat prints "Device" without the colon,
// which Salt 3006 does not recognise, so it reports "sys" only there;
// gsalt parses the same way so that both return the same keys.

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"unicode"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func diskIostatFunctions() []modules.Function {
	return []modules.Function{
		{Name: "disk.iostat", Spec: modules.Spec{Params: []modules.Param{opt("interval", int64(1)), opt("count", int64(5)), opt("disks", nil)}},
			Doc: "Gather and return (averaged) IO stats.\n\nCLI Example:\n\n    salt '*' disk.iostat 1 5 disks=sda",
			Fn:  diskIostat},
	}
}

// diskIostatCmd is the iostat command line Salt builds on Linux.
func diskIostatCmd(interval, count, disks any) string {
	iv, ct := pyfmt.Str(interval), pyfmt.Str(count)
	switch d := disks.(type) {
	case nil:
		return fmt.Sprintf("iostat -x %s %s ", iv, ct)
	case string:
		return fmt.Sprintf("iostat -xd %s %s %s", iv, ct, d)
	case []any:
		parts := make([]string, len(d))
		for i, x := range d {
			parts[i] = pyfmt.Str(x)
		}
		return fmt.Sprintf("iostat -xd %s %s %s", iv, ct, strings.Join(parts, " "))
	default:
		return fmt.Sprintf("iostat -xd %s %s %s", iv, ct, pyfmt.Str(d))
	}
}

func diskIostat(ctx context.Context, c *modules.Call) (any, error) {
	cmd := diskIostatCmd(c.Args.Get("interval"), c.Args.Get("count"), c.Args.Get("disks"))
	out, err := callFunction(ctx, c, "cmd.run_stdout", []any{cmd}, payload.NewMap("output_loglevel", "quiet"))
	if err != nil {
		return nil, err
	}
	return diskIostatParse(payload.Text(out))
}

// diskDecimal parses one number as Python's decimal.Decimal would.
func diskDecimal(s string) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/") {
		return nil, fmt.Errorf("%w: decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]", modules.ErrExecution)
	}
	return r, nil
}

// diskIostatParse is _iostat_linux's parsing of iostat's output.
func diskIostatParse(out string) (*payload.Map, error) {
	lines := archiveSplitLinesStr(out)
	var sysHeader, devHeader []string
	var sysStats [][]*big.Rat
	var devOrder []string
	devStats := map[string][][]*big.Rat{}
	row := func(fields []string) ([]*big.Rat, error) {
		r := make([]*big.Rat, len(fields))
		for i, f := range fields {
			d, err := diskDecimal(f)
			if err != nil {
				return nil, err
			}
			r[i] = d
		}
		return r, nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "avg-cpu:"):
			if sysHeader == nil {
				sysHeader = strings.FieldsFunc(line, cmdPyIsSpace)[1:]
			}
			i++
			if i >= len(lines) {
				return nil, fmt.Errorf("%w: StopIteration", modules.ErrExecution)
			}
			r, err := row(strings.FieldsFunc(lines[i], cmdPyIsSpace))
			if err != nil {
				return nil, err
			}
			sysStats = append(sysStats, r)
		case strings.HasPrefix(line, "Device:"):
			if devHeader == nil {
				devHeader = strings.FieldsFunc(line, cmdPyIsSpace)[1:]
			}
			for i+1 < len(lines) {
				next := lines[i+1]
				if next == "" {
					break
				}
				first := []rune(next)[0]
				if !unicode.IsLetter(first) && !unicode.IsDigit(first) {
					break
				}
				i++
				f := strings.FieldsFunc(next, cmdPyIsSpace)
				r, err := row(f[1:])
				if err != nil {
					return nil, err
				}
				if _, ok := devStats[f[0]]; !ok {
					devOrder = append(devOrder, f[0])
				}
				devStats[f[0]] = append(devStats[f[0]], r)
			}
			// Salt's loop consumed the line that ended the block.
			i++
		}
	}
	ret := &payload.Map{}
	if len(sysHeader) > 0 {
		ret.Set("sys", diskIostatsDict(sysHeader, sysStats))
	}
	for _, d := range devOrder {
		ret.Set(d, diskIostatsDict(devHeader, devStats[d]))
	}
	return ret, nil
}

// diskIostatsDict is _iostats_dict: each column averaged over the rows
// (zip stops at the shortest row and at the header's end), quantized to
// 0.01 half-even, as floats.
func diskIostatsDict(header []string, rows [][]*big.Rat) *payload.Map {
	cols := -1
	for _, r := range rows {
		if cols < 0 || len(r) < cols {
			cols = len(r)
		}
	}
	if cols < 0 {
		cols = 0
	}
	m := &payload.Map{}
	for j := 0; j < cols && j < len(header); j++ {
		sum := new(big.Rat)
		for _, r := range rows {
			sum.Add(sum, r[j])
		}
		avg := sum.Quo(sum, big.NewRat(int64(len(rows)), 1))
		m.Set(header[j], diskRoundHalfEven(avg))
	}
	return m
}

// diskRoundHalfEven rounds r to two decimals, ties to even, as a float.
func diskRoundHalfEven(r *big.Rat) float64 {
	scaled := new(big.Rat).Mul(r, big.NewRat(100, 1))
	num, den := scaled.Num(), scaled.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	// QuoRem truncates toward zero; compare 2*|rem| with den.
	twice := new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2))
	switch twice.Cmp(den) {
	case 1:
		q.Add(q, big.NewInt(int64(num.Sign())))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(int64(num.Sign())))
		}
	}
	f, _ := new(big.Rat).SetFrac(q, big.NewInt(100)).Float64()
	return f
}

// archiveSplitLinesStr is str.splitlines() as strings.
func archiveSplitLinesStr(s string) []string {
	l := archiveSplitLines(s)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = payload.Text(x)
	}
	return out
}
