package jinja

import (
	"errors"
	"testing"
)

// Jinja2 3.1 (python3-jinja2, checked by hand) refuses a trailing comma
// inside a subscript with "unexpected ']'", unlike list, tuple and dict
// literals and call arguments; a fuzz run against live Salt found gsalt
// accepting `{{ -not [a, b,] }}` (`not` is a name there, so the list is a
// subscript of it).
func TestSubscriptTrailingComma(t *testing.T) {
	env := NewEnvironment(Options{})
	for _, src := range []string{
		"{{ x[1,] }}",
		"{{ x[1,2,] }}",
		"{{ -not [a, b,] }}",
		"{{ x[1:2,] }}",
	} {
		_, err := env.Parse("t", src)
		var je *Error
		if !errors.As(err, &je) || !je.IsSyntax() || je.Msg != "unexpected ']'" {
			t.Errorf("Parse(%q) = %v; want TemplateSyntaxError \"unexpected ']'\"", src, err)
		}
	}
	for _, src := range []string{"{{ x[1, 2] }}", "{{ [a, b,] }}", "{{ x[1:2, 3] }}"} {
		if _, err := env.Parse("t", src); err != nil {
			t.Errorf("Parse(%q): %v", src, err)
		}
	}
}
