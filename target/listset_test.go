package target

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestListSetAgreesWithScan checks that a long list target matched through
// the Matcher's shared set answers exactly as the linear scan (Salt's
// list_match: `id in tgt`) for entries of every type, and that distinct
// lists of the same length are never confused.
func TestListSetAgreesWithScan(t *testing.T) {
	mixed := func(n int) []any {
		l := make([]any, 0, n)
		for i := range n {
			switch i % 6 {
			case 0, 1, 2:
				l = append(l, fmt.Sprintf("m-%04d", i))
			case 3:
				l = append(l, []byte(fmt.Sprintf("m-%04d", i))) // bytes never equal a str
			case 4:
				l = append(l, int64(i))
			case 5:
				l = append(l, payload.NewMap("m-"+fmt.Sprint(i), 1))
			}
		}
		return l
	}
	a, b := mixed(300), mixed(300)
	b[0] = "other"
	ids := []string{"m-0000", "m-0001", "m-0003", "m-0004", "m-0005", "m-0299", "m-0300", "other", "", "4"}
	m := New(Options{})
	for round := range 2 { // the second round reads the cached sets
		for li, l := range [][]any{a, b, mixed(listSetMin - 1)} {
			for _, id := range ids {
				got, err := m.Match(l, TypeList, "", Minion{ID: id})
				if err != nil {
					t.Fatal(err)
				}
				if want := listMatch(l, id); got != want {
					t.Errorf("round %d list %d id %q: got %v, scan says %v", round, li, id, got, want)
				}
			}
		}
	}
	// Many lists: the cache stays bounded and evicted lists still match.
	for i := range 3 * maxListSets {
		l := mixed(listSetMin + i)
		if ok, _ := m.Match(l, TypeList, "", Minion{ID: "m-0000"}); !ok {
			t.Fatalf("list %d: m-0000 not matched", i)
		}
	}
	if n := len(m.lists.sets); n > maxListSets {
		t.Errorf("%d cached sets, want at most %d", n, maxListSets)
	}
}

// TestListSetConcurrent matches one long list from many goroutines at once
// (as a swarm's identities do with a shared publish).
func TestListSetConcurrent(t *testing.T) {
	l := make([]any, 2000)
	for i := range l {
		l[i] = fmt.Sprintf("sw-%04d", i)
	}
	m := New(Options{})
	var wg sync.WaitGroup
	errs := make(chan string, 4000)
	for i := range 4000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("sw-%04d", i)
			ok, err := m.Match(l, TypeList, "", Minion{ID: id})
			if err != nil || ok != (i < 2000) {
				errs <- fmt.Sprintf("%s: %v %v", id, ok, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func BenchmarkListTarget10k(b *testing.B) {
	l := make([]any, 10000)
	for i := range l {
		l[i] = fmt.Sprintf("sw-%04d", i)
	}
	m := New(Options{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if ok, _ := m.Match(l, TypeList, "", Minion{ID: fmt.Sprintf("sw-%04d", i%10000)}); !ok {
			b.Fatal("not matched")
		}
	}
}
