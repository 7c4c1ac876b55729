package testutil

import (
	"strings"
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if n, err := b.Write([]byte("ab")); n != 2 || err != nil {
					t.Errorf("write: %d %v", n, err)
				}
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if s := b.String(); s != strings.Repeat("ab", 800) {
		t.Fatalf("unbounded buffer kept %d bytes", len(s))
	}
	bounded := Buffer{Max: 5}
	for _, w := range []string{"abc", "de", "f", "g"} {
		if n, err := bounded.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("write %q: %d %v", w, n, err)
		}
	}
	if s := bounded.String(); s != "abcde" {
		t.Fatalf("bounded buffer kept %q, want %q", s, "abcde")
	}
}
