package jinja

import (
	"os"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// FuzzRender checks that no template source makes the engine panic or
// run away (the golden cases are the seed corpus).
func FuzzRender(f *testing.F) {
	data, err := os.ReadFile("testdata/cases.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range strings.Split(string(data), "\n### ") {
		if _, body, ok := strings.Cut(c, "\n"); ok {
			f.Add(body)
		}
	}
	vars := payload.NewMap("items", []any{int64(1), "a", nil}, "d", payload.NewMap("k", []any{1.5}), "n", int64(3))
	f.Fuzz(func(t *testing.T, src string) {
		env := NewEnvironment(Options{MaxSteps: 20000, MaxOutput: 1 << 20, MaxRange: 1000})
		env.Loader = mapLoader{"a": src, "b": "{% include 'a' %}"}
		tpl, err := env.Parse("", src)
		if err != nil {
			return
		}
		_, _ = tpl.RenderMap(vars)
	})
}
