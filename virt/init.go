package virt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// initSpec is virt.init's signature (Salt 3006), plus the runner's
// image/enable_qcow/enable_vnc keywords that Salt 3006's virt.init
// receives but ignores; gsalt honours them (see initFunction).
func initSpec() modules.Spec {
	return kwSpec(req("name"), req("cpu"), req("mem"), opt("nic", "default"), opt("interfaces", nil), opt("hypervisor", nil),
		opt("start", true), opt("disk", "default"), opt("disks", nil), opt("saltenv", "base"), opt("seed", true), opt("install", true),
		opt("pub_key", nil), opt("priv_key", nil), opt("seed_cmd", "seed.apply"), opt("graphics", nil), opt("os_type", nil),
		opt("arch", nil), opt("boot", nil), opt("boot_dev", nil), opt("numatune", nil), opt("hypervisor_features", nil),
		opt("clock", nil), opt("serials", nil), opt("consoles", nil), opt("stop_on_reboot", false), opt("host_devices", nil))
}

const initDoc = `Initialize a new vm

CLI Example:

    salt 'hypervisor' virt.init vm_name 4 512 salt://path/to/image.raw
    salt 'hypervisor' virt.init vm_name 4 512 /var/lib/libvirt/images/img.raw
    salt 'hypervisor' virt.init vm_name 4 512 nic=profile disk=profile

gsalt: the image=, enable_qcow= and enable_vnc= keywords the virt.init
runner passes are honoured (Salt 3006 ignores them): image is the first
disk's image, enable_qcow makes it a qcow2 overlay, enable_vnc adds VNC
graphics. A failed init removes what it created (disk files, definition).`

func (m *Module) initFunctions() []modules.Function {
	return []modules.Function{
		{Name: "virt.init", Doc: initDoc, Spec: initSpec(), Fn: m.init},
		{Name: "virt.get_profiles", Doc: "Return the virt profiles for hypervisor.\n\nCLI Example:\n\n    salt '*' virt.get_profiles", Spec: kwSpec(opt("hypervisor", nil)),
			Fn: m.withConn(m.getProfiles)},
		{Name: "virt.seed_non_shared_migrate", Doc: "Non shared migration requires that the disks be present on the migration\ndestination, pass the disks information via this function, to the\nmigration destination before executing the migration.\n\nCLI Example:\n\n    salt '*' virt.seed_non_shared_migrate <disks>", Spec: kwSpec(req("disks"), opt("force", false)),
			Fn: m.seedNonSharedMigrate},
	}
}

// rollback remembers what init created, to undo it on failure.
type rollback struct {
	files []string
	log   *slog.Logger
}

func (r *rollback) undo() {
	for i := len(r.files) - 1; i >= 0; i-- {
		if err := os.Remove(r.files[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Warn("virt.init: cannot remove a disk it created", "path", r.files[i], "err", err)
		}
	}
}

func (m *Module) chooseHypervisor(conn Conn, want any) (string, []guestCaps, error) {
	caps, err := conn.Capabilities()
	if err != nil {
		return "", nil, err
	}
	guests, err := parseGuests(caps)
	if err != nil {
		return "", nil, err
	}
	hv := ""
	if payload.Truthy(want) {
		hv = payload.Text(want)
	} else {
		hvs, _, _ := hostDefaults(guests)
		if len(hvs) == 0 {
			return "", nil, fmt.Errorf("%w: No supported hypervisors were found", modules.ErrInvocation)
		}
		hv = preferred(hvs, "kvm")
	}
	if hv == "esxi" {
		hv = "vmware"
	}
	return hv, guests, nil
}

func (m *Module) init(ctx context.Context, c *modules.Call) (ret any, err error) {
	a := c.Args
	name := a.Str("name")
	if name == "" {
		return nil, fmt.Errorf("%w: a VM name is required", modules.ErrInvocation)
	}
	if err := checkPositive(a.Get("cpu"), "cpu"); err != nil {
		return nil, err
	}
	if err := checkPositive(a.Get("mem"), "mem"); err != nil {
		return nil, err
	}
	conn, err := m.conn(ctx, c)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	hv, guests, err := m.chooseHypervisor(conn, a.Get("hypervisor"))
	if err != nil {
		return nil, libvirtErr(err)
	}
	c.Log().Debug("Using hypervisor", "hypervisor", hv)
	// A guest of that name already defined: Salt would overwrite its disk
	// before libvirt refuses the definition; gsalt stops first.
	if names, err := domainNames(conn, allDomains); err == nil && slices.Contains(names, name) {
		return nil, fmt.Errorf("%w: The VM \"%s\" is already defined", modules.ErrExecution, name)
	}
	nicp, err := m.mergedNics(ctx, c, hv, a.Get("nic"), a.Get("interfaces"))
	if err != nil {
		return nil, err
	}
	diskp, err := m.diskProfile(ctx, c, conn, a.Get("disk"), hv, a.Get("disks"), name)
	if err != nil {
		return nil, err
	}
	legacyImage(c, diskp)
	rb := &rollback{log: c.Log()}
	defer func() {
		if err != nil {
			rb.undo()
		}
	}()
	seed := a.Bool("seed")
	for _, d := range diskp {
		if d.Str("device") == "cdrom" {
			continue
		}
		switch hv {
		case "qemu", "kvm", "xen":
		default:
			return nil, fmt.Errorf("%w: Unsupported hypervisor when handling disk image: %s", modules.ErrInvocation, hv)
		}
		imgDest := ""
		if src := d.Str("source_file"); src != "" {
			if _, err := os.Stat(src); err == nil {
				imgDest = src
			} else {
				if imgDest, err = m.qemuImageCreate(ctx, c, d, payload.Truthy(val(d, "overlay_image")), a.Str("saltenv"), rb); err != nil {
					return nil, err
				}
			}
		} else if payload.Truthy(val(d, "pool")) {
			if err := m.diskVolumeCreate(ctx, c, conn, d); err != nil {
				return nil, err
			}
		}
		if seed && imgDest != "" && payload.Truthy(val(d, "image")) {
			if err := m.seedImage(ctx, c, imgDest, name); err != nil {
				return nil, err
			}
		}
	}
	_, osTypes, arches := hostDefaults(guests)
	osType := a.Str("os_type")
	if !payload.Truthy(a.Get("os_type")) {
		osType = preferred(osTypes, "hvm")
	}
	arch := a.Str("arch")
	if !payload.Truthy(a.Get("arch")) {
		arch = preferred(arches, "x86_64")
	}
	boot := asMap(a.Get("boot"))
	if boot != nil {
		if err := checkBoot(boot); err != nil {
			return nil, err
		}
	}
	if payload.Truthy(a.Get("host_devices")) || payload.Truthy(a.Get("numatune")) {
		return nil, fmt.Errorf("%w: host_devices and numatune are not supported by gsalt's virt.init yet", modules.ErrInvocation)
	}
	graphics := asMap(a.Get("graphics"))
	if graphics == nil && payload.Truthy(c.Args.Get("enable_vnc")) {
		graphics = payload.NewMap("type", "vnc")
	}
	graphics = prepGraphics(graphics)
	spec := &domainSpec{name: name, hypervisor: hv, osType: osType, arch: arch, cpu: a.Get("cpu"), mem: a.Get("mem"),
		nics: nicp, graphics: graphics, boot: boot, bootDev: a.Get("boot_dev"), stopOnReboot: a.Bool("stop_on_reboot"),
		hypervisorFeatures: asMap(a.Get("hypervisor_features")), clock: asMap(a.Get("clock")),
		serials: chardevs(a.Get("serials")), consoles: chardevs(a.Get("consoles"))}
	if spec.disks, err = diskContexts(conn, diskp, hv); err != nil {
		return nil, err
	}
	x, err := genDomainXML(spec)
	if err != nil {
		return nil, err
	}
	c.Log().Debug("New virtual machine definition", "xml", x)
	dom, err := conn.DefineDomain(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
	}
	if a.Bool("start") {
		if err := dom.Create(); err != nil {
			if uerr := dom.Undefine(false); uerr != nil {
				c.Log().Warn("virt.init: cannot undefine after a failed start", "err", uerr)
			}
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
		}
	}
	return true, nil
}

// checkPositive refuses a cpu or mem that is zero or negative (libvirt
// would fail later, after the disks were made).
func checkPositive(v any, what string) error {
	if _, isMap := v.(*payload.Map); isMap || v == nil {
		return nil
	}
	if n, ok := payload.AsInt(v); ok && n <= 0 {
		return fmt.Errorf("%w: %s must be a positive number, got %d", modules.ErrInvocation, what, n)
	}
	if s, ok := v.(string); ok && humanToBytes(s, "m") <= 0 {
		return fmt.Errorf("%w: invalid %s value: %s", modules.ErrInvocation, what, s)
	}
	return nil
}

func chardevs(v any) []any {
	l, _ := v.([]any)
	out := make([]any, 0, len(l))
	for _, e := range l {
		m := asMap(e)
		if m == nil {
			out = append(out, e)
			continue
		}
		m = m.Clone()
		if !m.Has("type") {
			m.Set("type", "tcp")
		}
		if m.Str("type") == "tcp" {
			if !m.Has("port") {
				m.Set("port", int64(23023))
			}
			if !m.Has("protocol") {
				m.Set("protocol", "telnet")
			}
		}
		out = append(out, m)
	}
	return out
}

var bootCases = [][]string{{"efi"}, {"kernel", "initrd", "efi"}, {"kernel", "initrd", "cmdline", "efi"}, {"loader", "nvram"},
	{"kernel", "initrd"}, {"kernel", "initrd", "cmdline"}, {"kernel", "initrd", "loader", "nvram"}, {"kernel", "initrd", "cmdline", "loader", "nvram"}}

// checkBoot is _handle_remote_boot_params' check (remote URLs are not
// downloaded by gsalt: local paths only).
func checkBoot(boot *payload.Map) error {
	keys := slices.Sorted(slices.Values(boot.Keys()))
	for _, cs := range bootCases {
		if slices.Equal(keys, slices.Sorted(slices.Values(cs))) {
			for _, k := range keys {
				if s, ok := val(boot, k).(string); ok && strings.Contains(s, "://") {
					return fmt.Errorf("%w: remote boot files (%s) are not supported by gsalt yet", modules.ErrInvocation, s)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("%w: Invalid boot parameters,It has to follow this combination: [(kernel, initrd) or/and cmdline] or/and [(loader, nvram) or efi]", modules.ErrInvocation)
}

// legacyImage applies the runner's image=/enable_qcow= to the first disk.
func legacyImage(c *modules.Call, disks []*payload.Map) {
	img := c.Args.Get("image")
	if !payload.Truthy(img) {
		return
	}
	for _, d := range disks {
		if d.Str("device") != "disk" {
			continue
		}
		if !d.Has("image") {
			d.Set("image", img)
		}
		if payload.Truthy(c.Args.Get("enable_qcow")) && !d.Has("overlay_image") {
			d.Set("overlay_image", true)
		}
		return
	}
}

// nicOverlays are _complete_nics' defaults by hypervisor.
func nicOverlay(hv string) *payload.Map {
	switch hv {
	case "vmware":
		return payload.NewMap("type", "bridge", "source", "DEFAULT", "model", "e1000")
	case "kvm", "qemu":
		return payload.NewMap("type", "bridge", "source", "br0", "model", "virtio")
	case "xen":
		return payload.NewMap("type", "bridge", "source", "br0", "model", nil)
	case "bhyve":
		return payload.NewMap("type", "bridge", "source", "bridge0", "model", "virtio")
	}
	return nil
}

func completeNics(ifaces []*payload.Map, hv string) {
	ov := nicOverlay(hv)
	for _, i := range ifaces {
		for _, t := range []string{"bridge", "network"} {
			if v, ok := i.Get(t); ok {
				i.Set("type", t)
				i.Delete(t)
				i.Set("source", v)
			}
		}
		if !i.Has("type") {
			i.Set("type", nil)
		}
		if !i.Has("source") {
			i.Set("source", nil)
		}
		if ov != nil {
			for _, it := range ov.Items() {
				k := payload.KeyString(it.Key)
				if v, ok := i.Get(k); !ok || !payload.Truthy(v) {
					i.Set(k, it.Value)
				}
			}
		}
	}
}

func cloneMaps(v any) []*payload.Map {
	var out []*payload.Map
	for _, e := range asList(v) {
		if m := asMap(e); m != nil {
			out = append(out, m.Clone())
		}
	}
	return out
}

func (m *Module) nicProfile(ctx context.Context, c *modules.Call, profile, hv string) []*payload.Map {
	var data any = []any{payload.NewMap("eth0", payload.NewMap())}
	if conf := asMap(configGet(ctx, c, "virt:nic", nil)); conf != nil {
		if v, ok := conf.Get(profile); ok {
			data = v
		}
	}
	var ifaces []*payload.Map
	addDict := func(d *payload.Map) {
		for _, it := range d.Items() {
			attrs := asMap(it.Value)
			if attrs == nil {
				attrs = payload.NewMap()
			} else {
				attrs = attrs.Clone()
			}
			attrs.Set("name", it.Key)
			ifaces = append(ifaces, attrs)
		}
	}
	switch x := data.(type) {
	case *payload.Map:
		addDict(x)
	case []any:
		for _, e := range x {
			if d := asMap(e); d != nil {
				if d.Len() == 1 {
					addDict(d)
				} else {
					ifaces = append(ifaces, d.Clone())
				}
			}
		}
	}
	completeNics(ifaces, hv)
	return ifaces
}

func (m *Module) mergedNics(ctx context.Context, c *modules.Call, hv string, profile, interfaces any) ([]*payload.Map, error) {
	var nicp []*payload.Map
	if payload.Truthy(profile) {
		nicp = m.nicProfile(ctx, c, payload.Text(profile), hv)
	}
	if payload.Truthy(interfaces) {
		user := cloneMaps(interfaces)
		completeNics(user, hv)
		for _, u := range user {
			found := false
			for _, n := range nicp {
				if payload.Text(val(n, "name")) == payload.Text(val(u, "name")) {
					for _, it := range u.Items() {
						n.SetKey(it.Key, it.Value)
					}
					found = true
					break
				}
			}
			if !found {
				nicp = append(nicp, u)
			}
		}
	}
	return nicp, nil
}

// diskProfile is _disk_profile.
func (m *Module) diskProfile(ctx context.Context, c *modules.Call, conn Conn, profile any, hv string, disks any, vmName string) ([]*payload.Map, error) {
	var overlay *payload.Map
	switch hv {
	case "vmware":
		overlay = payload.NewMap("format", "vmdk", "model", "scsi", "device", "disk")
	case "qemu", "kvm":
		overlay = payload.NewMap("device", "disk", "model", "virtio")
	case "xen":
		overlay = payload.NewMap("device", "disk", "model", "xen")
	case "bhyve":
		overlay = payload.NewMap("format", "raw", "model", "virtio", "sparse_volume", false)
	default:
		overlay = payload.NewMap()
	}
	var list []*payload.Map
	if payload.Truthy(profile) {
		var prof any = []any{payload.NewMap("system", payload.NewMap("size", int64(8192)))}
		if conf := asMap(configGet(ctx, c, "virt:disk", nil)); conf != nil {
			if v, ok := conf.Get(payload.Text(profile)); ok {
				prof = v
			}
		}
		for _, e := range asList(prof) {
			d := asMap(e)
			if d == nil {
				continue
			}
			for _, it := range d.Items() {
				attrs := asMap(it.Value)
				if attrs == nil {
					attrs = payload.NewMap()
				} else {
					attrs = attrs.Clone()
				}
				attrs.Set("name", it.Key)
				list = append(list, attrs)
			}
		}
	}
	for _, u := range cloneMaps(disks) {
		if !u.Has("name") {
			continue
		}
		found := false
		for _, d := range list {
			if payload.Text(val(d, "name")) == payload.Text(val(u, "name")) {
				for _, it := range u.Items() {
					d.SetKey(it.Key, it.Value)
				}
				found = true
				break
			}
		}
		if !found {
			list = append(list, u)
		}
	}
	pools, err := poolNames(conn)
	if err != nil {
		return nil, libvirtErr(err)
	}
	for _, d := range list {
		if device(d) == "cdrom" && !d.Has("model") {
			d.Set("model", "ide")
		}
		for _, it := range overlay.Items() {
			if !d.Has(payload.KeyString(it.Key)) {
				d.SetKey(it.Key, it.Value)
			}
		}
		src := d.Str("source_file")
		if _, err := os.Stat(src); src != "" && err == nil {
			d.Set("filename", filepath.Base(src))
			if !payload.Truthy(val(d, "format")) {
				if device(d) != "cdrom" {
					d.Set("format", "qcow2")
				} else {
					d.Set("format", "raw")
				}
			}
		} else if vmName != "" && device(d) == "disk" {
			if err := m.fillDiskFilename(ctx, c, conn, vmName, d, hv, pools); err != nil {
				return nil, err
			}
		}
	}
	return list, nil
}

func device(d *payload.Map) string {
	if v, ok := d.Get("device"); ok {
		return payload.Text(v)
	}
	return "disk"
}

func poolNames(conn Conn) ([]string, error) {
	ps, err := conn.Pools()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range ps {
		n, err := p.Name()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// fillDiskFilename is _fill_disk_filename for path and dir-pool disks.
func (m *Module) fillDiskFilename(ctx context.Context, c *modules.Call, conn Conn, vmName string, d *payload.Map, hv string, pools []string) error {
	// The file goes in the images directory or pool: a VM or disk name
	// that would put it elsewhere is refused before anything is made
	// (gsalt's guard; Salt 3006 joins the names as they come).
	for what, n := range map[string]string{"VM": vmName, "disk": payload.Text(val(d, "name"))} {
		if strings.ContainsAny(n, "/\\") || n == ".." || strings.HasPrefix(n, "..") {
			return fmt.Errorf("%w: the %s name %q would put the disk image outside the images directory", modules.ErrInvocation, what, n)
		}
	}
	d.Set("filename", vmName+"_"+payload.Text(val(d, "name")))
	base := ""
	if v := val(d, "pool"); payload.Truthy(v) {
		base = payload.Text(v)
	}
	switch hv {
	case "qemu", "kvm", "xen":
		if base == "" {
			base = payload.Text(configGet(ctx, c, "virt:images", "/srv/salt-images"))
		}
		if !slices.Contains(pools, base) {
			if !payload.Truthy(val(d, "format")) {
				d.Set("format", "qcow2")
			}
			d.Set("filename", d.Str("filename")+"."+d.Str("format"))
			d.Set("source_file", filepath.Join(base, d.Str("filename")))
			return nil
		}
		if !d.Has("pool") {
			d.Set("pool", base)
		}
		p, err := conn.PoolByName(base)
		if err != nil {
			return libvirtErr(err)
		}
		if src := d.Str("source_file"); src != "" {
			if _, err := p.VolumeByName(src); err != nil {
				return fmt.Errorf("%w: %s volume doesn't exist in pool %s", modules.ErrInvocation, src, base)
			}
			d.Set("filename", src)
			d.Delete("source_file")
		}
		if !payload.Truthy(val(d, "format")) {
			x, err := p.XML()
			if err != nil {
				return libvirtErr(err)
			}
			doc, err := parseXML(x)
			if err != nil {
				return err
			}
			switch doc.attr("type") {
			case "dir", "fs", "netfs", "gluster", "rbd":
				d.Set("format", "qcow2")
			default:
				d.Set("format", "raw")
			}
		}
	}
	return nil
}

// diskContexts turns the disk profile into the template's disk contexts.
func diskContexts(conn Conn, disks []*payload.Map, hv string) ([]*payload.Map, error) {
	busPrefix := map[string]string{"virtio": "vd", "xen": "xvd", "fdc": "fd", "ide": "hd"}
	var targets []string
	var out []*payload.Map
	for i, d := range disks {
		model := payload.Text(val(d, "model"))
		if !d.Has("model") {
			return nil, fmt.Errorf("%w: disk %s has no model", modules.ErrInvocation, payload.Text(val(d, "name")))
		}
		prefix, ok := busPrefix[model]
		if !ok {
			prefix = "sd"
		}
		target := ""
		for j := 0; j < len(disks) && j < 26; j++ {
			t := prefix + string(rune('a'+j))
			if !slices.Contains(targets, t) {
				target = t
				break
			}
		}
		targets = append(targets, target)
		format := "raw"
		if v, ok := d.Get("format"); ok {
			format = payload.Text(v)
		}
		io := "native"
		if v, ok := d.Get("io"); ok {
			io = payload.Text(v)
		}
		dc := payload.NewMap("device", device(d), "target_dev", target, "disk_bus", model, "format", format,
			"index", fmt.Sprint(i), "io", io, "iothread", val(d, "iothread_id"))
		if src := d.Str("source_file"); src != "" {
			if u, remote := parseDiskURL(src); !remote {
				dc.Set("source_file", src)
				dc.Set("type", "file")
			} else if slices.Contains([]string{"http", "https", "ftp", "ftps", "tftp"}, u.Scheme) {
				dc.Set("type", "network")
				dc.Set("protocol", u.Scheme)
				dc.Set("volume", u.Path)
				dc.Set("query", u.RawQuery)
				var port any
				if u.Port() != "" {
					port = u.Port()
				}
				dc.Set("hosts", []any{payload.NewMap("name", u.Hostname(), "port", port)})
			}
		} else if pool := val(d, "pool"); payload.Truthy(pool) {
			dc.Set("volume", val(d, "filename"))
			p, err := conn.PoolByName(payload.Text(pool))
			if err != nil {
				return nil, libvirtErr(err)
			}
			x, err := p.XML()
			if err != nil {
				return nil, libvirtErr(err)
			}
			doc, err := parseXML(x)
			if err != nil {
				return nil, err
			}
			pt := doc.attr("type")
			if hv == "xen" || pt == "rbd" || pt == "gluster" || pt == "sheepdog" {
				return nil, fmt.Errorf("%w: %s pools are not supported by gsalt's virt.init yet", modules.ErrInvocation, pt)
			}
			if pt == "disk" || pt == "logical" {
				dc.Set("format", "raw")
			}
			dc.Set("type", "volume")
			dc.Set("pool", pool)
		} else {
			dc.Set("type", "file")
		}
		switch hv {
		case "qemu", "kvm", "bhyve", "xen":
			dc.Set("address", false)
			dc.Set("driver", true)
		case "esxi", "vmware":
			dc.Set("address", true)
			dc.Set("driver", false)
		}
		out = append(out, dc)
	}
	return out, nil
}

// cacheImage fetches a salt:// (or other) image with cp.cache_file; a
// local path is used as it is.
func (m *Module) cacheImage(ctx context.Context, c *modules.Call, image, saltenv string) (string, error) {
	if filepath.IsAbs(image) {
		if _, err := os.Stat(image); err != nil {
			return "", err
		}
		return image, nil
	}
	if c.Env == nil || c.Env.Registry == nil {
		return "", errors.New("cp.cache_file is not available")
	}
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, "cp.cache_file", []any{image, saltenv}, nil)
	s, ok := res.Return.(string)
	if !res.Success || !ok || s == "" {
		if ok && s != "" {
			return "", errors.New(s)
		}
		return "", errors.New("the file is not on the file server")
	}
	return s, nil
}

// imageFormat is qemu-img info's format of a file.
func (m *Module) imageFormat(ctx context.Context, path string) string {
	out, err := exec.CommandContext(ctx, m.qemuImg(), "info", "--output", "json", path).Output()
	if err != nil {
		return ""
	}
	var info struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(out, &info) != nil {
		return ""
	}
	return info.Format
}

func (m *Module) qemuImg1(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, m.qemuImg(), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("qemu-img %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// qemuImageCreate is _qemu_image_create: the disk file from an image
// (copied, or a qcow2 overlay on it) or empty with a size.
func (m *Module) qemuImageCreate(ctx context.Context, c *modules.Call, d *payload.Map, overlay bool, saltenv string, rb *rollback) (string, error) {
	size := val(d, "size")
	image := val(d, "image")
	if !payload.Truthy(size) && !payload.Truthy(image) {
		return "", fmt.Errorf("%w: Unable to create new disk %s, please specify disk size and/or disk image argument", modules.ErrExecution, d.Str("filename"))
	}
	dest := d.Str("source_file")
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	mode := os.FileMode(0o777^umask()) & 0o666
	if payload.Truthy(image) {
		img := payload.Text(image)
		sfn, err := m.cacheImage(ctx, c, img, saltenv)
		if err != nil {
			return "", fmt.Errorf("%w: Problem while copying image. %s - %v", modules.ErrExecution, img, err)
		}
		qcow2 := m.imageFormat(ctx, sfn) == "qcow2"
		rb.files = append(rb.files, dest)
		if overlay && qcow2 {
			c.Log().Info("Cloning qcow2 image using copy on write", "image", sfn)
			if err := m.qemuImg1(ctx, "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", sfn, dest); err != nil {
				return "", fmt.Errorf("%w: Problem while copying image. %s - %v", modules.ErrExecution, img, err)
			}
		} else if err := copyFile(sfn, dest); err != nil {
			return "", fmt.Errorf("%w: Problem while copying image. %s - %v", modules.ErrExecution, img, err)
		}
		if payload.Truthy(size) && qcow2 {
			if err := m.qemuImg1(ctx, "resize", "-q", dest, payload.Text(size)+"M"); err != nil {
				// Salt ignores a failed resize (a smaller size than the image's).
				c.Log().Warn("qemu-img resize failed", "err", err)
			}
		}
		if err := os.Chmod(dest, mode); err != nil {
			return "", fmt.Errorf("%w: Problem while copying image. %s - %v", modules.ErrExecution, img, err)
		}
		return dest, nil
	}
	format := "qcow2"
	if v := val(d, "format"); payload.Truthy(v) {
		format = payload.Text(v)
	}
	rb.files = append(rb.files, dest)
	if err := m.qemuImg1(ctx, "create", "-q", "-f", format, dest, payload.Text(size)+"M"); err != nil {
		return "", fmt.Errorf("%w: Problem while creating volume %s - %v", modules.ErrExecution, dest, err)
	}
	if err := os.Chmod(dest, mode); err != nil {
		return "", fmt.Errorf("%w: Problem while creating volume %s - %v", modules.ErrExecution, dest, err)
	}
	return dest, nil
}

func umask() os.FileMode {
	old := syscall.Umask(0)
	syscall.Umask(old)
	return os.FileMode(old)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// diskVolumeCreate is _disk_volume_create for volumes without an image.
func (m *Module) diskVolumeCreate(_ context.Context, _ *modules.Call, conn Conn, d *payload.Map) error {
	if payload.Truthy(val(d, "overlay_image")) {
		return fmt.Errorf("%w: Disk overlay_image property is not supported when creating volumes,use backing_store_path and backing_store_format instead.", modules.ErrInvocation)
	}
	if payload.Truthy(val(d, "image")) {
		return fmt.Errorf("%w: images in storage pool volumes are not supported by gsalt's virt.init yet; use a path (virt:images)", modules.ErrInvocation)
	}
	p, err := conn.PoolByName(d.Str("pool"))
	if err != nil {
		return libvirtErr(err)
	}
	if _, err := p.VolumeByName(d.Str("filename")); err == nil {
		return nil
	}
	size := int64(0)
	if v, ok := payload.AsInt(val(d, "size")); ok {
		size = v
	}
	x := fmt.Sprintf("<volume><name>%s</name><capacity unit='MiB'>%d</capacity><allocation unit='MiB'>0</allocation><target><format type='%s'/></target></volume>",
		esc(d.Str("filename")), size, esc(d.Str("format")))
	if _, err := p.CreateVolume(x); err != nil {
		return fmt.Errorf("%w: %s", modules.ErrExecution, err.Error())
	}
	return nil
}

// seedImage runs seed_cmd on a disk image like _seed_image.
func (m *Module) seedImage(ctx context.Context, c *modules.Call, img, name string) error {
	a := c.Args
	fun := a.Str("seed_cmd")
	if c.Env == nil || c.Env.Registry == nil {
		return fmt.Errorf("%w: '%s' is not available", modules.ErrExecution, fun)
	}
	kw := payload.NewMap("__kwarg__", true, "id_", name, "config", a.Get("config"), "install", a.Get("install"),
		"pub_key", a.Get("pub_key"), "priv_key", a.Get("priv_key"))
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, fun, []any{img, kw}, c.Pub)
	if !res.Success {
		return fmt.Errorf("%w: seeding %s with %s failed: %v", modules.ErrExecution, img, fun, res.Return)
	}
	if b, ok := res.Return.(bool); ok && !b {
		return fmt.Errorf("%w: seeding %s with %s failed", modules.ErrExecution, img, fun)
	}
	return nil
}

// getProfiles is virt.get_profiles.
func (m *Module) getProfiles(ctx context.Context, c *modules.Call, conn Conn) (any, error) {
	hv, _, err := m.chooseHypervisor(conn, c.Args.Get("hypervisor"))
	if err != nil {
		return nil, err
	}
	def, err := m.diskProfile(ctx, c, conn, "default", hv, nil, "")
	if err != nil {
		return nil, err
	}
	disk := payload.NewMap("default", mapsToList(def))
	nic := payload.NewMap("default", mapsToList(m.nicProfile(ctx, c, "default", hv)))
	if conf := asMap(configGet(ctx, c, "virt", nil)); conf != nil {
		for _, p := range profileNames(val(conf, "disk")) {
			l, err := m.diskProfile(ctx, c, conn, p, hv, nil, "")
			if err != nil {
				return nil, err
			}
			disk.Set(p, mapsToList(l))
		}
		for _, p := range profileNames(val(conf, "nic")) {
			nic.Set(p, mapsToList(m.nicProfile(ctx, c, p, hv)))
		}
	}
	return payload.NewMap("disk", disk, "nic", nic), nil
}

func profileNames(v any) []string {
	var out []string
	switch x := v.(type) {
	case *payload.Map:
		out = x.Keys()
	case []any:
		for _, e := range x {
			out = append(out, payload.Text(e))
		}
	}
	return out
}

func mapsToList(ms []*payload.Map) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}
