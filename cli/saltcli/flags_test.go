package saltcli

import (
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

func TestCLIFlags(t *testing.T) {
	tests := []struct {
		args    []string
		env     string
		want    CLIFlags
		indent  *int
		noParse []string
	}{
		{args: nil, env: "a, b,,", noParse: []string{"a", "b"}},
		{args: []string{"--out", "json", "--out-indent", "0", "--no-parse", "x"}, env: "y",
			want: CLIFlags{Out: "json"}, indent: new(int), noParse: []string{"x"}},
		{args: []string{"--output", "yaml", "--output-indent=-1", "--output-file", "f", "--output-file-append", "--no-colour", "--force-colour"},
			want: CLIFlags{Out: "yaml", OutFile: "f", OutFileAppend: true, NoColor: true, ForceColor: true}, indent: func() *int { n := -1; return &n }()},
	}
	for _, tc := range tests {
		t.Setenv("SALT_NO_PARSE", tc.env)
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var c CLIFlags
		c.Add(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got := CLIFlags{Out: c.Out, OutFile: c.OutFile, OutFileAppend: c.OutFileAppend, NoColor: c.NoColor, ForceColor: c.ForceColor}
		if got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.args, got, tc.want)
		}
		if gi := c.OutIndent(); (gi == nil) != (tc.indent == nil) || gi != nil && *gi != *tc.indent {
			t.Errorf("%v: OutIndent %v, want %v", tc.args, gi, tc.indent)
		}
		if np := c.NoParse(); !reflect.DeepEqual(np, tc.noParse) {
			t.Errorf("%v: NoParse %q, want %q", tc.args, np, tc.noParse)
		}
		if !fs.Lookup("output").Hidden || fs.Lookup("out").Hidden {
			t.Errorf("%v: alias flags must be hidden, the main ones not", tc.args)
		}
	}
}
