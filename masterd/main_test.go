package masterd_test

import (
	"os"
	"sync"
	"testing"
)

// sharedBin is the folder of gsalt's commands built once for the tests of
// this package that run real processes (see prodBin); removed by TestMain.
var (
	sharedBinOnce sync.Once
	sharedBinDir  string
	sharedBinPath string
)

// prodBin builds every command once per test binary and returns the
// folder holding them.
func prodBin(t *testing.T) string {
	t.Helper()
	sharedBinOnce.Do(func() {
		d, err := os.MkdirTemp("", "gsb")
		if err != nil {
			t.Fatal(err)
		}
		sharedBinDir = d
		sharedBinPath = buildTools(t, d)
	})
	if sharedBinPath == "" {
		t.Fatal("building the commands failed earlier")
	}
	return sharedBinPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedBinDir != "" {
		os.RemoveAll(sharedBinDir)
	}
	os.Exit(code)
}
