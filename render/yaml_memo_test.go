package render

import (
	"context"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestMemoYAML: a remembered document decodes to the same tree, a caller
// changing its tree does not change the next one, and a changed byte is a
// different document, for a large document and a reactor's small one.
func TestMemoYAML(t *testing.T) {
	small := "top: 1\nbench-job:\n  local.test.ping:\n    - tgt: sw-0001\n"
	for name, doc := range map[string]string{"large": largeYAMLDoc(), "small": small} {
		t.Run(name, func(t *testing.T) { testMemoYAML(t, doc) })
	}
}

func largeYAMLDoc() string {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(": [1, two]\n")
	}
	return "top: 1\n" + b.String()
}

func testMemoYAML(t *testing.T, doc string) {
	memo := newMemoYAML()
	rd := NewRegistry()
	rd.Register("yaml", memo)
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
	if _, hit := memo.trees[doc]; !hit {
		t.Fatal("the document was not remembered")
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

// BenchmarkSmallYAML: a reactor's few-line reaction decoded by YAML and
// handed out again by the memo (the copy a repeated render gets).
func BenchmarkSmallYAML(b *testing.B) {
	doc := "bench-job:\n  local.test.ping:\n    - tgt: sw-0001\n"
	for _, bc := range []struct {
		name string
		rd   Renderer
	}{{"decode", YAML{}}, {"memo", newMemoYAML()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := bc.rd.Render(context.Background(), doc, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
