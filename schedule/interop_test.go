package schedule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// TestEvalScenariosAgainstSalt runs Salt 3006's own scheduler over the
// same scenarios (testdata/salt_eval.py) and checks that it starts the
// same jobs at the same seconds as the expectations gsalt is tested
// against, or, where a scenario records that Salt differs, exactly what
// the scenario says Salt does.
func TestEvalScenariosAgainstSalt(t *testing.T) {
	src := saltpeer.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := os.ReadFile("testdata/salt_eval.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := saltpeer.PythonCommand(ctx, src, string(code), "testdata/eval_scenarios.json")
	// Both sides use fixed times; TZ pins what Python's naive datetimes mean.
	cmd.Env = append(cmd.Env, "TZ=UTC")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Skipf("schedule oracle: %s is not installed for %s; skipping", strings.TrimSpace(string(out)), saltpeer.Python())
	}
	if err != nil {
		t.Fatalf("salt_eval.py: %v\n%s", err, stderr.String())
	}
	var salt map[string][][3]interface{}
	if err := json.Unmarshal(out, &salt); err != nil {
		t.Fatalf("salt_eval.py output: %v\n%s", err, out)
	}
	for _, sc := range loadScenarios(t) {
		want := sc.Want
		if sc.SaltDiffers != "" {
			want = sc.Salt
		}
		got, ok := salt[sc.Name]
		if !ok {
			t.Errorf("%s: Salt gave nothing", sc.Name)
			continue
		}
		if got == nil {
			got = [][3]interface{}{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Salt ran %v, the scenario expects %v", sc.Name, got, want)
		}
	}
}
