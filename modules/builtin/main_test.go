package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestMain lets tests build the gsalt commands they start
// (TestSaltProxyStartsGsaltProxy).
func TestMain(m *testing.M) { proc.Main(m) }
