package runners

import (
	"context"
	"errors"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

type optMap map[string]any

func (o optMap) Get(k string) (any, bool) { v, ok := o[k]; return v, ok }

// TestMasterCaller: pillar templates call execution functions on the
// master with the minion's grains.
func TestMasterCaller(t *testing.T) {
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	mc := masterCaller{env: &modules.Env{ID: "m1", Opts: optMap{}, Grains: payload.NewMap("os", "Debian"), Registry: reg}}
	ctx := context.Background()
	cases := []struct {
		fun    string
		args   []any
		kw     *payload.Map
		want   any
		errIs  error
		anyErr bool
	}{
		{fun: "test.echo", args: []any{"hi"}, want: "hi"},
		{fun: "grains.get", args: []any{"os"}, want: "Debian"},
		{fun: "grains.get", kw: payload.NewMap("key", "nope", "default", "dflt"), want: "dflt"},
		{fun: "no.such", errIs: modules.ErrNotAvailable},
		{fun: "test.echo", anyErr: true}, // missing argument
	}
	for _, tc := range cases {
		got, err := mc.CallFunction(ctx, tc.fun, tc.args, tc.kw)
		switch {
		case tc.errIs != nil:
			if !errors.Is(err, tc.errIs) {
				t.Errorf("%s: err %v", tc.fun, err)
			}
		case tc.anyErr:
			if err == nil {
				t.Errorf("%s: no error", tc.fun)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s: %v %v, want %v", tc.fun, got, err, tc.want)
		}
	}
}
