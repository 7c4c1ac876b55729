package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/modules/salttest"
)

// goldenRegistry is the registry the golden suites run against.
func goldenRegistry(t *testing.T) *modules.Registry {
	t.Helper()
	r := modules.NewRegistry()
	if err := builtin.Register(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// runSuite runs a salttest suite against the built-in modules.
func runSuite(t *testing.T, s salttest.Suite) {
	t.Helper()
	salttest.Run(t, s, goldenRegistry(t))
}
