package builtin

// This file is the swap part of Salt's mount module (salt/modules/mount.py)
// on Linux: mount.swaps reads /proc/swaps, mount.swapon and mount.swapoff
// run swapon(8)/swapoff(8) through cmd.run as Salt does and report from
// /proc/swaps again.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// mountProcSwaps is the kernel's table of active swap areas.
const mountProcSwaps = "/proc/swaps"

func mountSwapFunctions() []modules.Function {
	return []modules.Function{
		{Name: "mount.swaps", Spec: modules.Spec{},
			Doc: "Return a dict containing information on active swap\n\nCLI Example:\n\n    salt '*' mount.swaps",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return mountSwaps(c) }},
		{Name: "mount.swapon", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("priority", nil)}},
			Doc: "Activate a swap disk\n\nCLI Example:\n\n    salt '*' mount.swapon /root/swapfile",
			Fn:  mountSwapon},
		{Name: "mount.swapoff", Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Doc: "Deactivate a named swap mount\n\nCLI Example:\n\n    salt '*' mount.swapoff /root/swapfile",
			Fn:  mountSwapoff},
	}
}

// mountSwapSupported rejects the kernels whose swap tools Salt drives
// differently (swap -l, swapctl); gsalt reads /proc/swaps only.
func mountSwapSupported(c *modules.Call) error {
	k := pkgGrain(c, "kernel", "Linux")
	if k == "SunOS" || strings.Contains(k, "AIX") || pkgGrain(c, "os", "") == "OpenBSD" {
		return fmt.Errorf("%w: swap management on %s is not supported by gsalt (Linux /proc/swaps only)", modules.ErrExecution, k)
	}
	return nil
}

// mountSwaps is mount.swaps: filename → type, size, used and priority,
// as the strings of /proc/swaps.
func mountSwaps(c *modules.Call) (*payload.Map, error) {
	if err := mountSwapSupported(c); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(mountProcSwaps)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
	}
	ret := &payload.Map{}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "Filename") {
			continue
		}
		f := strings.FieldsFunc(line, cmdPyIsSpace)
		if len(f) < 5 {
			return nil, fmt.Errorf("%w: unexpected line in %s: %q", modules.ErrExecution, mountProcSwaps, strings.TrimSpace(line))
		}
		ret.Set(f[0], payload.NewMap("type", f[1], "size", f[2], "used", f[3], "priority", f[4]))
	}
	return ret, nil
}

// mountSwapon is mount.swapon.
func mountSwapon(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("name"))
	ret := &payload.Map{}
	on, err := mountSwaps(c)
	if err != nil {
		return nil, err
	}
	if st, ok := on.Get(name); ok {
		ret.Set("stats", st)
		ret.Set("new", false)
		return ret, nil
	}
	cmd := fmt.Sprintf("swapon '%s'", name)
	if p := c.Args.Get("priority"); payload.Truthy(p) {
		cmd += " -p " + pyfmt.Str(p)
	}
	if _, err := callFunction(ctx, c, "cmd.run", []any{cmd}, payload.NewMap("python_shell", false)); err != nil {
		return nil, err
	}
	if on, err = mountSwaps(c); err != nil {
		return nil, err
	}
	if st, ok := on.Get(name); ok {
		ret.Set("stats", st)
		ret.Set("new", true)
	}
	return ret, nil
}

// mountSwapoff is mount.swapoff: True when the swap went away, False
// when it is still active, None when it was not active.
func mountSwapoff(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("name"))
	on, err := mountSwaps(c)
	if err != nil {
		return nil, err
	}
	if !on.Has(name) {
		return nil, nil
	}
	if _, err := callFunction(ctx, c, "cmd.run", []any{fmt.Sprintf("swapoff '%s'", name)}, payload.NewMap("python_shell", false)); err != nil {
		return nil, err
	}
	if on, err = mountSwaps(c); err != nil {
		return nil, err
	}
	return !on.Has(name), nil
}
