package render

import (
	"context"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestMemoYAML: a remembered document decodes to the same tree, a caller
// changing its tree does not change the next one, and a changed byte is a
// different document.
func TestMemoYAML(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(": [1, two]\n")
	}
	doc := "top: 1\n" + b.String()
	rd := Default()
	first, err := rd.Render(context.Background(), []byte(doc), "yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := first.(*payload.Map)
	if !ok {
		t.Fatalf("got %T", first)
	}
	m.Set("top", "changed by the caller")
	second, err := rd.Render(context.Background(), []byte(doc), "yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := second.(*payload.Map).Get("top"); v != int64(1) && v != 1 {
		t.Fatalf("second render top = %#v, want 1", v)
	}
	third, err := rd.Render(context.Background(), []byte(strings.Replace(doc, "top: 1", "top: 2", 1)), "yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := third.(*payload.Map).Get("top"); v != int64(2) && v != 2 {
		t.Fatalf("changed document top = %#v, want 2", v)
	}
	if _, err := rd.Render(context.Background(), []byte(doc+"top: dup\n"), "yaml", nil); err == nil {
		t.Fatal("duplicate key: no error")
	}
}
