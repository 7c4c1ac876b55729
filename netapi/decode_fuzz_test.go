package netapi

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzLowstate feeds arbitrary bodies of each content type through the
// request decoder and lowdata formatting: they must give chunks or an
// HTTP error, never a panic, and chunks must be mappings.
func FuzzLowstate(f *testing.F) {
	for _, s := range []string{
		`[{"client": "local", "tgt": "*", "fun": "test.ping"}]`,
		`{"client": "runner", "fun": "jobs.list_jobs", "arg": 1}`,
		`client=local&tgt=*&fun=test.arg&arg=a&arg=b`,
		"- client: local\n  tgt: '*'\n  fun: test.ping\n",
		`[[[[[[[[[[]]]]]]]]]]`, `"x"`, `1e400`, `{"a": {"b": [1, 2.5, null, true]}}`,
		"&&&=%zz", "!!binary AAAA", "*a", "a: &a [*a]",
	} {
		for _, ct := range []string{"application/json", "application/x-www-form-urlencoded", "application/x-yaml", ""} {
			f.Add(ct, s)
		}
	}
	f.Fuzz(func(t *testing.T, ct, body string) {
		r, err := http.NewRequest("POST", "/", strings.NewReader(body))
		if err != nil {
			return
		}
		r.Header.Set("Content-Type", ct)
		v, err := decodeBody(r)
		if err != nil {
			if _, ok := err.(*httpError); !ok {
				t.Fatalf("decode error is not an HTTP error: %v", err)
			}
			return
		}
		chunks, err := lowstate(v)
		if err != nil {
			if _, ok := err.(*httpError); !ok {
				t.Fatalf("lowstate error is not an HTTP error: %v", err)
			}
			return
		}
		for _, c := range chunks {
			if c == nil {
				t.Fatal("nil chunk")
			}
			if a, ok := c.Get("arg"); ok {
				if _, isList := a.([]any); !isList {
					t.Fatalf("arg not a list: %T", a)
				}
			}
		}
	})
}
