package render_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestPipelines(t *testing.T) {
	rc := &render.Context{Grains: payload.NewMap("os", "Debian"), Saltenv: "base"}
	tests := []struct {
		name, src, pipe, want string
		err                   error
	}{
		{"default", "os: {{ grains.os }}\nflag: yes\n", "", `{"flag":true,"os":"Debian"}`, nil},
		{"shebang yaml", "#!yaml\nos: '{{ grains.os }}'\n", "", `{"os":"{{ grains.os }}"}`, nil},
		{"shebang json", "#!json\n{\"b\": 1, \"a\": [1.5]}", "", `{"a":[1.5],"b":1}`, nil},
		{"jinja json", "#!jinja|json\n{\"os\": \"{{ grains.os }}\"}", "", `{"os":"Debian"}`, nil},
		{"py refused", "#!py\ndef run(): return {}", "", "", render.ErrRenderer},
		{"unknown", "x: 1", "nope", "", render.ErrRenderer},
		{"bad yaml", "a: 1\na: 2\n", "", "", render.ErrData},
		{"bad jinja", "{% if %}", "", "", render.ErrTemplate},
		{"empty", "", "", `{}`, nil},
	}
	reg := render.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reg.Render(context.Background(), []byte(tt.src), tt.pipe, rc)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			var a, w any
			_ = json.Unmarshal(b, &a)
			_ = json.Unmarshal([]byte(tt.want), &w)
			ab, _ := json.Marshal(a)
			wb, _ := json.Marshal(w)
			if string(ab) != string(wb) {
				t.Fatalf("got %s want %s", ab, wb)
			}
		})
	}
}
