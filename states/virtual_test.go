package states

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
)

// TestMissingFunString: a state module recorded with RegisterVirtual is
// reported with its __virtual__ reason while its execution function is
// missing or refused by its execution module's __virtual__, and as "is not
// available." once it loads. A module with state functions of its own is
// judged only when the execution functions are known.
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
	refusing := modules.NewRegistry()
	if err := refusing.Register(modules.Function{Name: "db.user_create", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }},
		modules.Function{Name: "real.x", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }}); err != nil {
		t.Fatal(err)
	}
	refusing.SetVirtual("db", func(*modules.Env) error { return errors.New("no db binary") })
	refusing.SetVirtual("real", func(*modules.Env) error { return errors.New("no real binary") })
	env := &modules.Env{Registry: refusing}
	tests := []struct {
		full    string
		exec    *modules.Registry
		refused bool
		want    string
	}{
		{"db_user.present", nil, true, "'db_user' __virtual__ returned False: db module could not be loaded"},
		{"db_user.absent", modules.NewRegistry(), true, "'db_user' __virtual__ returned False: db module could not be loaded"},
		{"db_user.present", withDB, false, "'db_user.present' is not available."},
		{"db_user.present", refusing, true, "'db_user' __virtual__ returned False: db module could not be loaded"},
		{"real.absent", nil, false, "'real.absent' is not available."},
		{"real.present", modules.NewRegistry(), true, "'real' __virtual__ returned False: never shown"},
		{"real.present", refusing, true, "'real' __virtual__ returned False: never shown"},
		{"other.present", nil, false, "'other.present' is not available."},
	}
	for _, tc := range tests {
		if got := r.MissingFunString(tc.full, tc.exec, env); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.full, got, tc.want)
		}
		mod, _, _ := strings.Cut(tc.full, ".")
		if _, refused := r.Refused(mod, tc.exec, env); refused != tc.refused {
			t.Errorf("%s: refused %v, want %v", tc.full, refused, tc.refused)
		}
	}
}
