package virt_test

import (
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestMain lets four of the parallel tests run at once (each on its own
// private libvirtd): they mostly wait on libvirtd, QEMU and daemons.
func TestMain(m *testing.M) { proc.MainParallel(m, 4) }
