// Package fnreg holds what gsalt's function registries share (execution
// modules, state modules, runners, wheel): a
// table of functions by "module.function" name, the panic guard they call
// a function through, the text Salt's clients return when arguments do
// not fit, and the argument accessors of a call.
package fnreg

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/wire/payload"
)

// Table holds values of type T by name; it is safe for concurrent use. Set
// its exported fields before the first Register (a zero Table works for
// Add, Get and Names).
type Table[T any] struct {
	// Kind names an entry in Register's errors ("runner").
	Kind string
	// ErrInvalid and ErrDuplicate are the sentinels Register's errors wrap.
	ErrInvalid, ErrDuplicate error
	// Entry returns an entry's name and whether it has a function.
	Entry func(T) (name string, hasFn bool)

	mu sync.RWMutex
	m  map[string]*T
}

// ValidName reports whether name has Salt's "module.function" form.
func ValidName(name string) bool { return name != "" && strings.Contains(name, ".") }

// Register adds v under its name. An entry without a "module.function"
// name or a function fails with "<ErrInvalid>: <Kind> needs a
// module.function name and a Fn", a name already taken with
// "<ErrDuplicate>: <name>".
func (t *Table[T]) Register(v T) error {
	name, hasFn := t.Entry(v)
	if !ValidName(name) || !hasFn {
		return fmt.Errorf("%w: %s needs a module.function name and a Fn", t.ErrInvalid, t.Kind)
	}
	if !t.Add(name, v) {
		return fmt.Errorf("%w: %s", t.ErrDuplicate, name)
	}
	return nil
}

// MustRegister registers every entry of a package's own table; a failure
// is a programming error and panics.
func (t *Table[T]) MustRegister(vs ...T) {
	for _, v := range vs {
		if err := t.Register(v); err != nil {
			panic(err)
		}
	}
}

// Add stores a copy of v under name. It reports false, storing nothing,
// when the name is taken.
func (t *Table[T]) Add(name string, v T) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[name]; ok {
		return false
	}
	if t.m == nil {
		t.m = map[string]*T{}
	}
	t.m[name] = &v
	return true
}

// Get returns the value stored under name.
func (t *Table[T]) Get(name string) (*T, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	v, ok := t.m[name]
	return v, ok
}

// Names returns the stored names, sorted.
func (t *Table[T]) Names() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]string, 0, len(t.m))
	for n := range t.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Call runs fn(ctx, c), turning a panic into the error "<what> panicked:
// <value>".
func Call[C any](ctx context.Context, what string, fn func(context.Context, C) (any, error), c C) (ret any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %v", what, r)
		}
	}()
	return fn(ctx, c)
}

// InvalidArguments is the return text of Salt's runner and wheel clients
// when a Python-style call does not fit the function: err's message
// without the sentinel's prefix, then the function's usage text.
func InvalidArguments(err, sentinel error, doc string) string {
	msg := strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
	return fmt.Sprintf("\nPassed invalid arguments: %s\n\nUsage:\n%s", msg, doc)
}

// Str returns args[name] as text ("" for nil or a missing name).
func Str(args map[string]any, name string) string {
	v := args[name]
	if v == nil {
		return ""
	}
	return payload.Text(v)
}
