package builtin

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// diskFormatFunctions is disk.format: mkfs on a device, then sync.
func diskFormatFunctions() []modules.Function {
	return []modules.Function{
		{Name: "disk.format", Spec: modules.Spec{Params: []modules.Param{req("device"), opt("fs_type", "ext4"),
			opt("inode_size", nil), opt("lazy_itable_init", nil), opt("fat", nil), opt("force", false)}, PyName: "format_"},
			Doc: "Create a filesystem on device with mkfs -t fs_type (default ext4), then\n" +
				"sync. inode_size applies to ext* (-i) and xfs (-i size=...),\n" +
				"lazy_itable_init to ext* (-E lazy_itable_init=...), fat (12, 16 or 32) to\n" +
				"*fat types (-F), force to ext* (-F) and xfs (-f). Returns True when both\n" +
				"mkfs and sync exit 0. This destroys what the device holds.\n\n" +
				"CLI Example:\n\n    salt '*' disk.format /dev/sdX1",
			Fn: diskFormat},
	}
}

// pySliceEquals is s[from:to] == want for a Python value s (a str, or a
// list, which never equals a str); other types raise TypeError.
func pySliceEquals(v any, prefix bool, n int, want string) (bool, error) {
	switch x := v.(type) {
	case string:
		r := []rune(x)
		if len(r) > n {
			if prefix {
				r = r[:n]
			} else {
				r = r[len(r)-n:]
			}
		}
		return string(r) == want, nil
	case []any:
		return false, nil
	}
	return false, fmt.Errorf("%w: '%s' object is not subscriptable", modules.ErrArguments, pyfmt.TypeName(v))
}

func diskFormat(ctx context.Context, c *modules.Call) (any, error) {
	fsType := c.Args.Get("fs_type")
	argv := []any{"mkfs", "-t", pyfmt.Str(fsType)}
	isExt := func() (bool, error) { return pySliceEquals(fsType, true, 3, "ext") }
	if inode := c.Args.Get("inode_size"); inode != nil {
		ext, err := isExt()
		if err != nil {
			return nil, err
		}
		if ext {
			argv = append(argv, "-i", pyfmt.Str(inode))
		} else if fsType == "xfs" {
			argv = append(argv, "-i", "size="+pyfmt.Str(inode))
		}
	}
	if lazy := c.Args.Get("lazy_itable_init"); lazy != nil {
		ext, err := isExt()
		if err != nil {
			return nil, err
		}
		if ext {
			argv = append(argv, "-E", "lazy_itable_init="+pyfmt.Str(lazy))
		}
	}
	if fat := c.Args.Get("fat"); fat != nil && diskFatSize(fat) {
		isFat, err := pySliceEquals(fsType, false, 3, "fat")
		if err != nil {
			return nil, err
		}
		if isFat {
			argv = append(argv, "-F", fat)
		}
	}
	if payload.Truthy(c.Args.Get("force")) {
		ext, err := isExt()
		if err != nil {
			return nil, err
		}
		if ext {
			argv = append(argv, "-F")
		} else if fsType == "xfs" {
			argv = append(argv, "-f")
		}
	}
	argv = append(argv, pyfmt.Str(c.Args.Get("device")))
	ignore := payload.NewMap("ignore_retcode", true)
	mkfs, err := callFunction(ctx, c, "cmd.retcode", []any{argv}, ignore)
	if err != nil {
		return nil, err
	}
	sync, err := callFunction(ctx, c, "cmd.retcode", []any{"sync"}, ignore)
	if err != nil {
		return nil, err
	}
	return diskRetcodeZero(mkfs) && diskRetcodeZero(sync), nil
}

// diskFatSize is fat in (12, 16, 32) by Python equality (12.0 counts,
// True does not).
func diskFatSize(v any) bool {
	switch x := v.(type) {
	case int64:
		return x == 12 || x == 16 || x == 32
	case float64:
		return x == 12 || x == 16 || x == 32
	}
	return false
}

// diskRetcodeZero is retcode == 0 for cmd.retcode's return.
func diskRetcodeZero(v any) bool {
	switch x := v.(type) {
	case int64:
		return x == 0
	case int:
		return x == 0
	}
	return false
}
