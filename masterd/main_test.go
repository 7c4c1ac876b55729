package masterd_test

import (
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// prodBin builds every command once per test binary and returns the
// folder holding them (removed by TestMain).
func prodBin(t *testing.T) string {
	t.Helper()
	return proc.Build(t)
}

func TestMain(m *testing.M) { proc.Main(m) }
