package virt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/pyyaml"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Seeding (Salt's seed module). Salt opens a disk image with libguestfs or
// qemu-nbd; gsalt needs neither the nbd kernel module nor libguestfs:
//
//   - a raw image is loop-mounted directly;
//   - any other format qemu understands (qcow2, qcow2 overlays included) is
//     exported as a raw file by qemu-storage-daemon's FUSE export
//     (writes go through qemu, so an overlay keeps its backing file
//     untouched), and that file is loop-mounted;
//   - in both cases the first Linux partition of an MBR partition table is
//     mounted (mount_point= "N" or "/dev/xxxN" picks partition N), or the
//     whole image when it has no partition table.
//
// Loop mounts need root; a missing qemu-storage-daemon, /dev/fuse or
// mount is reported in one clear error.

// ErrSeedUnavailable means no seeding method works on this host.
var ErrSeedUnavailable = errors.New("seed: cannot open the image")

// Seeder opens images for seeding. The zero value uses the host's tools.
type Seeder struct {
	// QemuImg, QemuStorageDaemon and Mount name the commands ("" means the
	// usual names on PATH).
	QemuImg, QemuStorageDaemon, Mount, Umount string
}

func (s *Seeder) cmd(name, def string) string {
	if name != "" {
		return name
	}
	return def
}

// mounted is an opened image.
type mounted struct {
	dir     string
	cleanup []func() error
}

func (m *mounted) close() error {
	var errs []error
	for i := len(m.cleanup) - 1; i >= 0; i-- {
		errs = append(errs, m.cleanup[i]())
	}
	return errors.Join(errs...)
}

// partition is a byte range of an image.
type partition struct{ offset, size int64 }

// mbrPartition picks the partition of an MBR image to mount: the wanted
// number (1-4) or the first Linux (0x83) one; ok is false when the image
// has no partition table.
func mbrPartition(head []byte, want int) (partition, bool, error) {
	if len(head) < 512 || head[510] != 0x55 || head[511] != 0xAA {
		return partition{}, false, nil
	}
	// A filesystem superblock also ends its first sector with 55 AA in some
	// cases (FAT); an MBR has at least one entry with a known type.
	var parts []partition
	var types []byte
	for i := 0; i < 4; i++ {
		e := head[446+16*i : 446+16*(i+1)]
		start := binary.LittleEndian.Uint32(e[8:12])
		n := binary.LittleEndian.Uint32(e[12:16])
		parts = append(parts, partition{int64(start) * 512, int64(n) * 512})
		types = append(types, e[4])
	}
	if want > 0 {
		if want > 4 || types[want-1] == 0 {
			return partition{}, true, fmt.Errorf("%w: no partition %d in the image", ErrSeedUnavailable, want)
		}
		return parts[want-1], true, nil
	}
	for i, t := range types {
		if t == 0x83 && parts[i].size > 0 {
			return parts[i], true, nil
		}
	}
	for i, t := range types {
		if t != 0 && parts[i].size > 0 {
			return parts[i], true, nil
		}
	}
	return partition{}, false, nil
}

// partitionNumber reads mount_point= ("2", "/dev/sda2").
func partitionNumber(v any) int {
	s := payload.Text(v)
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(s[i:])
	return n
}

// openImage mounts the filesystem of an image file.
func (s *Seeder) openImage(ctx context.Context, path string, part int) (*mounted, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: seeding a disk image needs root (loop mounts)", ErrSeedUnavailable)
	}
	m := &mounted{}
	fail := func(err error) (*mounted, error) {
		_ = m.close()
		return nil, err
	}
	raw := path
	format := imageFormatOf(ctx, s.cmd(s.QemuImg, "qemu-img"), path)
	if format == "" {
		return nil, fmt.Errorf("%w: qemu-img cannot read %s", ErrSeedUnavailable, path)
	}
	if format != "raw" {
		qsd, err := exec.LookPath(s.cmd(s.QemuStorageDaemon, "qemu-storage-daemon"))
		if err != nil {
			return nil, fmt.Errorf("%w: a %s image needs qemu-storage-daemon (package qemu-system-common) to be opened", ErrSeedUnavailable, format)
		}
		if _, err := os.Stat("/dev/fuse"); err != nil {
			return nil, fmt.Errorf("%w: a %s image needs /dev/fuse to be opened", ErrSeedUnavailable, format)
		}
		work, err := os.MkdirTemp("", "gsalt-seed")
		if err != nil {
			return nil, err
		}
		m.cleanup = append(m.cleanup, func() error { return os.RemoveAll(work) })
		raw = filepath.Join(work, "raw")
		if err := os.WriteFile(raw, nil, 0o600); err != nil {
			return fail(err)
		}
		pid := filepath.Join(work, "qsd.pid")
		cmd := exec.Command(qsd,
			"--blockdev", "driver=file,node-name=file,filename="+qsdEscape(path),
			"--blockdev", "driver="+format+",node-name=fmt,file=file",
			"--export", "type=fuse,id=exp,node-name=fmt,mountpoint="+qsdEscape(raw)+",writable=on",
			"--pidfile", pid)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return fail(fmt.Errorf("%w: qemu-storage-daemon: %v", ErrSeedUnavailable, err))
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		m.cleanup = append(m.cleanup, func() error {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			return nil
		})
		// The export is up when the pid file exists and raw has the size.
		deadline := time.Now().Add(30 * time.Second)
		for {
			if fi, err := os.Stat(raw); err == nil && fi.Size() > 0 {
				if _, err := os.Stat(pid); err == nil {
					break
				}
			}
			select {
			case err := <-done:
				done <- err
				return fail(fmt.Errorf("%w: qemu-storage-daemon exited: %v: %s", ErrSeedUnavailable, err, strings.TrimSpace(stderr.String())))
			default:
			}
			if time.Now().After(deadline) {
				return fail(fmt.Errorf("%w: qemu-storage-daemon did not export %s", ErrSeedUnavailable, path))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	head := make([]byte, 512)
	f, err := os.Open(raw)
	if err != nil {
		return fail(err)
	}
	_, err = f.ReadAt(head, 0)
	f.Close()
	if err != nil {
		return fail(fmt.Errorf("%w: read %s: %v", ErrSeedUnavailable, path, err))
	}
	p, hasTable, err := mbrPartition(head, part)
	if err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "gsalt-seed-mnt")
	if err != nil {
		return fail(err)
	}
	m.cleanup = append(m.cleanup, func() error { return os.Remove(dir) })
	opts := "loop"
	if hasTable {
		opts += fmt.Sprintf(",offset=%d,sizelimit=%d", p.offset, p.size)
	}
	out, err := exec.CommandContext(ctx, s.cmd(s.Mount, "mount"), "-o", opts, raw, dir).CombinedOutput()
	if err != nil {
		return fail(fmt.Errorf("%w: mount %s: %v: %s", ErrSeedUnavailable, path, err, strings.TrimSpace(string(out))))
	}
	m.dir = dir
	m.cleanup = append(m.cleanup, func() error {
		out, err := exec.Command(s.cmd(s.Umount, "umount"), dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("umount %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
	return m, nil
}

// qsdEscape doubles commas for qemu's option syntax.
func qsdEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

func imageFormatOf(ctx context.Context, qemuImg, path string) string {
	m := &Module{QemuImg: qemuImg}
	return m.imageFormat(ctx, path)
}

// open mounts path by its type: a directory as it is, a block device with
// mount, an image file as openImage does.
func (s *Seeder) open(ctx context.Context, path string, part int) (*mounted, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return &mounted{dir: path}, nil
	case fi.Mode()&os.ModeDevice != 0:
		dir, err := os.MkdirTemp("", "gsalt-seed-mnt")
		if err != nil {
			return nil, err
		}
		if out, err := exec.CommandContext(ctx, s.cmd(s.Mount, "mount"), path, dir).CombinedOutput(); err != nil {
			_ = os.Remove(dir)
			return nil, fmt.Errorf("%w: mount %s: %v: %s", ErrSeedUnavailable, path, err, strings.TrimSpace(string(out)))
		}
		return &mounted{dir: dir, cleanup: []func() error{
			func() error { return os.Remove(dir) },
			func() error { return exec.Command(s.cmd(s.Umount, "umount"), dir).Run() },
		}}, nil
	}
	return s.openImage(ctx, path, part)
}

func seedFunctions(s *Seeder) []modules.Function {
	return []modules.Function{
		{Name: "seed.apply", Doc: seedApplyDoc,
			Spec: modules.Spec{Params: []modules.Param{req("path"), opt("id_", nil), opt("config", nil), opt("approve_key", true), opt("install", true),
				opt("prep_install", false), opt("pub_key", nil), opt("priv_key", nil), opt("mount_point", nil)}},
			Fn: s.apply},
		{Name: "seed.mkconfig", Doc: "Generate keys and config and put them in a tmp directory.\n\npub_key\n    absolute path or file content of an optional preseeded salt key\n\npriv_key\n    absolute path or file content of an optional preseeded salt key\n\nCLI Example:\n\n    salt 'minion' seed.mkconfig [config=config_data] [tmp=tmp_dir] \\\n            [id_=minion_id] [approve_key=(true|false)]",
			Spec: modules.Spec{Params: []modules.Param{opt("config", nil), opt("tmp", nil), opt("id_", nil), opt("approve_key", true), opt("pub_key", nil), opt("priv_key", nil)}},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				tmp := c.Args.Str("tmp")
				if !payload.Truthy(c.Args.Get("tmp")) {
					var err error
					if tmp, err = os.MkdirTemp("", "gsalt-seed"); err != nil {
						return nil, err
					}
				}
				return mkconfig(ctx, c, tmp)
			}},
		{Name: "seed.prep_bootstrap", Doc: "Update and get the random script to a random place\n\nCLI Example:\n\n    salt '*' seed.prep_bootstrap /tmp",
			Spec: modules.Spec{Params: []modules.Param{req("mpt")}},
			Fn: func(context.Context, *modules.Call) (any, error) {
				return nil, fmt.Errorf("%w: seed.prep_bootstrap needs bootstrap-salt.sh (config.gather_bootstrap_script), which gsalt does not ship; pre-install salt-minion or gsalt-minion in the image", modules.ErrExecution)
			}},
	}
}

const seedApplyDoc = `Seed a location (disk image, directory, or block device) with the
minion config, approve the minion's key, and/or install salt-minion.

CLI Example:

    salt 'minion' seed.apply path id [config=config_data] \
            [gen_key=(true|false)] [approve_key=(true|false)] \
            [install=(true|false)]

gsalt opens image files with qemu-storage-daemon (FUSE) and a loop mount
(root, no nbd or libguestfs needed) and configures an image that already
has salt-minion or gsalt-minion; it does not run bootstrap-salt.sh.`

// contentOrFile is _file_or_content.
func contentOrFile(v any) string {
	s := payload.Text(v)
	if data, err := os.ReadFile(s); err == nil {
		return string(data)
	}
	return s
}

// mkconfig is seed.mkconfig: the minion config and key pair in tmp.
func mkconfig(ctx context.Context, c *modules.Call, tmp string) (*payload.Map, error) {
	cfg := payload.NewMap()
	if m := asMap(c.Args.Get("config")); m != nil {
		cfg = m.Clone()
	}
	if !cfg.Has("master") {
		if c.Env != nil && c.Env.Opts != nil {
			if v, ok := c.Env.Opts.Get("master"); ok && payload.Text(v) != "salt" {
				cfg.Set("master", v)
			}
		}
	}
	if id := c.Args.Get("id_"); payload.Truthy(id) {
		cfg.Set("id", id)
	}
	text, err := pyyaml.Dump(cfg, pyyaml.Options{SortKeys: sortStringKeys})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	conf := filepath.Join(tmp, "minion")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	pubfn, privfn := filepath.Join(tmp, "minion.pub"), filepath.Join(tmp, "minion.pem")
	pub, priv := c.Args.Get("pub_key"), c.Args.Get("priv_key")
	if payload.Truthy(pub) && payload.Truthy(priv) {
		if err := os.WriteFile(pubfn, []byte(contentOrFile(pub)), 0o600); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		if err := os.WriteFile(privfn, []byte(contentOrFile(priv)), 0o600); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	} else {
		if _, err := crypt.WriteKeyPair(tmp, "minion", 2048); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		if c.Args.Bool("approve_key") {
			// Salt asks the master's virtkey ext_pillar to accept the
			// key (it does when the master authorized this VM on this
			// hypervisor within ten minutes, as the virt.init runner does).
			pub, err := os.ReadFile(pubfn)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
			if c.Env != nil && c.Env.Registry != nil {
				ext := payload.NewMap("virtkey", []any{c.Args.Get("id_"), string(pub)})
				res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, "pillar.ext", []any{ext}, nil)
				if res.Retcode != 0 {
					c.Log().Error("seed: the virtkey request failed", "err", payload.Text(res.Return))
				}
			}
		}
	}
	return payload.NewMap("config", conf, "pubkey", pubfn, "privkey", privfn), nil
}

// minionInstalled tells whether the image holds salt-minion or
// gsalt-minion (Salt runs "type salt-minion" in a chroot; gsalt looks
// for the file, which needs no shell in the image).
func minionInstalled(root string) bool {
	for _, dir := range []string{"usr/bin", "bin", "usr/local/bin", "usr/sbin", "sbin", "opt/saltstack/salt"} {
		for _, n := range []string{"salt-minion", "gsalt-minion"} {
			if fi, err := os.Stat(filepath.Join(root, dir, n)); err == nil && !fi.IsDir() {
				return true
			}
		}
	}
	return false
}

func (s *Seeder) apply(ctx context.Context, c *modules.Call) (ret any, err error) {
	path := c.Args.Str("path")
	if _, err := os.Stat(path); err != nil {
		return fmt.Sprintf("%s does not exist", path), nil
	}
	if t, err := filepath.EvalSymlinks(path); err == nil {
		path = t
	}
	mnt, err := s.open(ctx, path, partitionNumber(c.Args.Get("mount_point")))
	if err != nil {
		if errors.Is(err, ErrSeedUnavailable) {
			return nil, fmt.Errorf("%w: %s could not be mounted: %v", modules.ErrExecution, path, err)
		}
		return nil, fmt.Errorf("%w: %s could not be mounted: %v", modules.ErrExecution, path, err)
	}
	defer func() {
		if cerr := mnt.close(); cerr != nil && err == nil {
			err = fmt.Errorf("%w: %v", modules.ErrExecution, cerr)
		}
	}()
	tmp := filepath.Join(mnt.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o1777); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	files, err := mkconfig(ctx, c, tmp)
	if err != nil {
		return nil, err
	}
	switch {
	case minionInstalled(mnt.dir):
		c.Log().Info("salt-minion pre-installed on image", "id", c.Args.Get("id_"))
		pki := "/etc/salt/pki/minion"
		if m := asMap(c.Args.Get("config")); m != nil && payload.Truthy(val(m, "pki_dir")) {
			pki = payload.Text(val(m, "pki_dir"))
		}
		pkiDir := filepath.Join(mnt.dir, strings.TrimPrefix(pki, "/"))
		if err := os.MkdirAll(pkiDir, 0o700); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		if err := os.MkdirAll(filepath.Join(mnt.dir, "etc/salt"), 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		for _, mv := range [][2]string{
			{files.Str("privkey"), filepath.Join(pkiDir, "minion.pem")},
			{files.Str("pubkey"), filepath.Join(pkiDir, "minion.pub")},
			{files.Str("config"), filepath.Join(mnt.dir, "etc/salt/minion")},
		} {
			if err := os.Rename(mv[0], mv[1]); err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
		}
		return true, nil
	case c.Args.Bool("install"):
		c.Log().Error("seed: the image has no salt-minion or gsalt-minion, and gsalt does not run bootstrap-salt.sh to install one", "path", path)
		return false, nil
	case c.Args.Bool("prep_install"):
		c.Log().Error("The prep_install option is no longer supported.")
		return false, nil
	}
	c.Log().Warn("No useful action performed", "path", mnt.dir)
	return false, nil
}

// sortStringKeys is sorted(d.items()) for string keys (yaml.safe_dump's
// order); mixed keys keep their order.
func sortStringKeys(m *payload.Map) ([]payload.Item, error) {
	items := append([]payload.Item(nil), m.Items()...)
	for _, it := range items {
		if _, ok := it.Key.(string); !ok {
			return nil, errors.New("unsortable keys")
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Key.(string) < items[j].Key.(string) })
	return items, nil
}
