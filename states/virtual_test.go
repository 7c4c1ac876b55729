package states

import (
	"context"
	"testing"

	"github.com/gsalt/gsalt/modules"
)

// TestMissingFunString: a state module recorded with RegisterVirtual is
// reported with its __virtual__ reason while its execution function is
// missing, and as "is not available." once it exists or when the module
// has state functions of its own.
func TestMissingFunString(t *testing.T) {
	noop := func(context.Context, *Call) (Ret, error) { return Ret{}, nil }
	r := NewRegistry()
	if err := r.Register(Function{Name: "real.present", Fn: noop}); err != nil {
		t.Fatal(err)
	}
	r.RegisterVirtual("db_user", Virtual{Needs: "db.user_create", Reason: "db module could not be loaded"})
	r.RegisterVirtual("real", Virtual{Needs: "real.x", Reason: "never shown"})
	withDB := modules.NewRegistry()
	if err := withDB.Register(modules.Function{Name: "db.user_create", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		full string
		exec *modules.Registry
		want string
	}{
		{"db_user.present", nil, "'db_user' __virtual__ returned False: db module could not be loaded"},
		{"db_user.absent", modules.NewRegistry(), "'db_user' __virtual__ returned False: db module could not be loaded"},
		{"db_user.present", withDB, "'db_user.present' is not available."},
		{"real.absent", nil, "'real.absent' is not available."},
		{"other.present", nil, "'other.present' is not available."},
	}
	for _, tc := range tests {
		if got := r.MissingFunString(tc.full, tc.exec); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.full, got, tc.want)
		}
	}
}
