package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/states/builtin"
)

func TestRegister(t *testing.T) {
	r := states.NewRegistry()
	if err := builtin.Register(r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"file.managed", "file.directory", "file.absent", "file.symlink", "file.append",
		"file.line", "file.replace", "file.blockreplace", "file.recurse", "cmd.run", "cmd.script", "cmd.wait",
		"service.running", "service.dead", "service.enabled", "pkg.installed", "pkg.removed", "test.nop",
		"test.succeed_with_changes", "test.fail_without_changes", "test.configurable_test_state",
		"event.send", "module.run"} {
		if _, ok := r.Lookup(name); !ok {
			t.Errorf("%s not registered", name)
		}
	}
	if err := builtin.Register(r); err == nil {
		t.Error("registering twice must fail")
	}
}
