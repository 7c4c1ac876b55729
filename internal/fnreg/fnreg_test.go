package fnreg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestTable(t *testing.T) {
	var tb Table[string]
	if _, ok := tb.Get("a.b"); ok {
		t.Fatal("empty table found a.b")
	}
	for _, tc := range []struct {
		name, val string
		added     bool
	}{{"b.x", "1", true}, {"a.y", "2", true}, {"b.x", "3", false}} {
		if got := tb.Add(tc.name, tc.val); got != tc.added {
			t.Errorf("Add(%q) = %v, want %v", tc.name, got, tc.added)
		}
	}
	if v, ok := tb.Get("b.x"); !ok || *v != "1" {
		t.Errorf("Get(b.x) = %v %v, want the first value", v, ok)
	}
	if got := tb.Names(); !slices.Equal(got, []string{"a.y", "b.x"}) {
		t.Errorf("Names = %q", got)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb.Add(fmt.Sprintf("m.f%d", i), "v")
			tb.Names()
		}()
	}
	wg.Wait()
	if n := len(tb.Names()); n != 10 {
		t.Errorf("%d names after concurrent adds, want 10", n)
	}
}

func TestRegister(t *testing.T) {
	errInvalid, errDup := errors.New("x: invalid arguments"), errors.New("x: duplicate")
	type entry struct {
		name string
		fn   func()
	}
	tb := Table[entry]{Kind: "thing", ErrInvalid: errInvalid, ErrDuplicate: errDup,
		Entry: func(e entry) (string, bool) { return e.name, e.fn != nil }}
	fn := func() {}
	tests := []struct {
		e       entry
		wantErr string
		is      error
	}{
		{entry{"m.f", fn}, "", nil},
		{entry{"m.f", fn}, "x: duplicate: m.f", errDup},
		{entry{"nodot", fn}, "x: invalid arguments: thing needs a module.function name and a Fn", errInvalid},
		{entry{"m.g", nil}, "x: invalid arguments: thing needs a module.function name and a Fn", errInvalid},
	}
	for _, tc := range tests {
		err := tb.Register(tc.e)
		if (err == nil) != (tc.wantErr == "") || (err != nil && (err.Error() != tc.wantErr || !errors.Is(err, tc.is))) {
			t.Errorf("Register(%q) = %v, want %q", tc.e.name, err, tc.wantErr)
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("MustRegister of a taken name did not panic")
		}
	}()
	tb.MustRegister(entry{"m.h", fn}, entry{"m.f", fn})
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"": false, "test": false, "test.ping": true, "a.b.c": true} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v", name, got)
		}
	}
}

func TestCall(t *testing.T) {
	sentinel := errors.New("boom")
	tests := []struct {
		name    string
		fn      func(context.Context, int) (any, error)
		ret     any
		wantErr string
	}{
		{"value", func(_ context.Context, n int) (any, error) { return n * 2, nil }, 4, ""},
		{"error", func(context.Context, int) (any, error) { return nil, sentinel }, nil, "boom"},
		{"panic", func(context.Context, int) (any, error) { panic("bad") }, nil, "runner panicked: bad"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ret, err := Call(context.Background(), "runner", tc.fn, 2)
			if ret != tc.ret {
				t.Errorf("ret = %v, want %v", ret, tc.ret)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestInvalidArgumentsAndStr(t *testing.T) {
	sentinel := errors.New("runners: invalid arguments")
	err := fmt.Errorf("%w: f() got an unexpected keyword argument 'x'", sentinel)
	want := "\nPassed invalid arguments: f() got an unexpected keyword argument 'x'\n\nUsage:\nDOC"
	if got := InvalidArguments(err, sentinel, "DOC"); got != want {
		t.Errorf("InvalidArguments = %q", got)
	}
	args := map[string]any{"s": "x", "n": int64(3), "nil": nil}
	for name, want := range map[string]string{"s": "x", "n": "3", "nil": "", "missing": ""} {
		if got := Str(args, name); got != want {
			t.Errorf("Str(%q) = %q, want %q", name, got, want)
		}
	}
}
