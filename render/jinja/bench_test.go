package jinja

import (
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

func BenchmarkLoop(b *testing.B) {
	env := NewEnvironment(Options{TrimBlocks: true, LstripBlocks: true})
	src := `{% for u in users %}
{{ u.name }}:
  user.present:
    - uid: {{ u.uid }}
    - groups: {{ u.groups|join(',') }}
{% if u.admin and u.uid > 1000 %}    - shell: /bin/bash
{% endif %}{% endfor %}`
	var users []any
	for i := 0; i < 1000; i++ {
		users = append(users, payload.NewMap("name", "user", "uid", int64(1000+i), "groups", []any{"a", "b"}, "admin", i%2 == 0))
	}
	tpl, err := env.Parse("", src)
	if err != nil {
		b.Fatal(err)
	}
	vars := payload.NewMap("users", users)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tpl.RenderMap(vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	env := NewEnvironment(Options{})
	src := `{% set x = {'a': [1, 2, 3], 'b': {'c': 'd'}} %}{% for k, v in x.items() %}{{ k }}={{ v }}{% if v is mapping %}m{% endif %}{% endfor %}{{ x.a|map('string')|join(',') }}`
	for i := 0; i < b.N; i++ {
		if _, err := env.Parse("", src); err != nil {
			b.Fatal(err)
		}
	}
}
