package pillar

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// extCSV is salt/pillar/csvpillar.py (virtual name "csv"): the first row
// of the CSV file whose idkey column is the minion id, as a dict of
// column name -> text (under namespace when set), read like Python's
// csv.DictReader with the excel dialect.
func extCSV() ExtModule {
	return ExtModule{Name: "csv", Params: []ExtParam{
		{Name: "path", Required: true}, {Name: "idkey", Default: "id"}, {Name: "namespace"},
		{Name: "fieldnames"}, {Name: "restkey"}, {Name: "restval"}, {Name: "dialect", Default: "excel"},
	}, Fn: csvPillar}
}

func csvPillar(ctx context.Context, c *ExtCall) (any, error) {
	path := c.Str("path")
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("[Errno %d] %s: %s", errnoOf(pe.Err), pyStrerror(pe.Err), pyfmt.Repr(path))
		}
		return nil, err
	}
	defer f.Close()
	d := c.Str("dialect")
	rd := csv.NewReader(f)
	rd.FieldsPerRecord = -1
	rd.LazyQuotes = true
	switch d {
	case "excel":
	case "excel-tab":
		rd.Comma = '\t'
	default:
		return nil, errors.New("unknown dialect")
	}
	var fields []any
	if l, ok := c.Args["fieldnames"].([]any); ok && payload.Truthy(l) {
		fields = l
	}
	idkey := c.Args["idkey"]
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) == 1 && rec[0] == "" {
			continue // DictReader skips empty rows
		}
		if fields == nil {
			fields = make([]any, len(rec))
			for i, s := range rec {
				fields[i] = s
			}
			continue
		}
		row := payload.NewMap()
		for i, fn := range fields {
			if i < len(rec) {
				row.SetKey(fn, rec[i])
			} else {
				row.SetKey(fn, c.Args["restval"])
			}
		}
		if len(rec) > len(fields) {
			rest := make([]any, 0, len(rec)-len(fields))
			for _, s := range rec[len(fields):] {
				rest = append(rest, s)
			}
			row.SetKey(c.Args["restkey"], rest)
		}
		v, ok := row.GetKey(idkey)
		if !ok {
			return nil, errors.New(pyfmt.Repr(idkey))
		}
		if v == c.MinionID {
			if payload.Truthy(c.Args["namespace"]) {
				out := payload.NewMap()
				out.SetKey(c.Args["namespace"], row)
				return out, nil
			}
			return row, nil
		}
	}
	return emptyResult(), nil
}
