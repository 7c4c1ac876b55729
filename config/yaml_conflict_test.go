package config

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
)

// TestConflictingIDTextLikeSalt: a repeated key fails with the text of
// the ConstructorError Salt's YAML loader raises (the mapping's and the
// key's positions), which Salt puts in "Rendering SLS ... failed: ...".
func TestConflictingIDTextLikeSalt(t *testing.T) {
	docs := []string{
		"a: 1\nb: 2\na: 3\n",
		"\n\n# c\nx:\n  y: 1\n  z: 2\n  y: 3\n",
		"top:\n  - {k: 1, k: 2}\n",
		"1: a\ntrue: b\n'1': c\n1: d\n",
	}
	src := saltpeer.Require(t)
	for _, doc := range docs {
		_, err := DecodeYAMLPayload([]byte(doc))
		var ce *ConflictingIDError
		if !errors.As(err, &ce) || !errors.Is(err, ErrYAML) {
			t.Fatalf("%q: %v", doc, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := saltpeer.PythonCommand(ctx, src, `
import sys, salt.utils.yaml
try:
    salt.utils.yaml.safe_load(sys.argv[1])
except Exception as exc:
    sys.stdout.write(str(exc))
`, doc)
		out, perr := cmd.Output()
		cancel()
		if perr != nil {
			t.Fatalf("python: %v", perr)
		}
		if got := strings.TrimSpace(err.Error()); got != strings.TrimSpace(string(out)) {
			t.Errorf("%q:\n gsalt %q\n salt  %q", doc, got, out)
		}
	}
}
