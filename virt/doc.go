// Package virt is Salt Virt on libvirt: the virt.* execution module
// (salt/modules/virt.py), the virt.* state module (salt/states/virt.py),
// the virt.* runner (salt/runners/virt.py) and image seeding
// (salt/modules/seed.py).
//
// # Library and build
//
// Every libvirt call goes through the small Conn/Domain/Network/Pool/Volume
// interfaces of this package (libvirt.go), so the XML generation, host
// choice and seeding logic do not depend on the bindings. The real
// implementation (libvirt_dlopen.go) is libvirt.org/go/libvirt v1.9000.0
// built with the libvirt_dlopen tag: cgo and a C compiler are needed, no
// libvirt headers, and libvirt.so.0 is opened at run time. gsalt probes the
// library itself before the first call (libvirt-go crashes when it is
// missing), so a minion without libvirt gets ErrNoLibvirt ("libvirt is not
// installed on this minion: libvirt.so.0 not found") from every virt.*
// function and keeps running; a binary built without the tag gets
// ErrNotBuilt. `go build ./...` without the tag needs no cgo.
//
// Connections are Salt's: the connection=, username=, password= arguments,
// else virt:connection:uri and virt:connection:auth:* from config.get
// (options, grains, pillar), else libvirt's default (qemu:///system for
// root).
//
// # Seeding
//
// seed.apply opens images without nbd or libguestfs: raw images are
// loop-mounted, other formats (qcow2 and qcow2 overlays) are exported as a
// raw file by qemu-storage-daemon's FUSE export and that file is
// loop-mounted; the first Linux partition of an MBR table is used (or the
// whole image). Root, qemu-storage-daemon and /dev/fuse are needed; a
// missing one is a clear error. The image must already hold salt-minion or
// gsalt-minion: gsalt does not run bootstrap-salt.sh.
//
// # Differences from Salt 3006
//
// Each is a fix of a Salt bug or a gap, documented where it is made:
// virt.init honours the runner's image=/enable_qcow=/enable_vnc= (Salt
// 3006 ignores them), refuses an existing name before touching disks,
// checks cpu/mem, and removes what it created when it fails; overlay_image
// works (Salt quotes the backing path wrongly); peer-to-peer migration uses
// migrateToURI3; the runner reports a failed virt.init as "fail", lets the
// hypervisor choose kvm/qemu, takes config= for the seeded minion, does not
// delete whole image directories on purge, and fires
// salt/cloud/<name>/creating|created|failed|destroying|destroyed events.
// virt.update (update.go, changexml.go) changes cpu (model, topology,
// features, numa, tuning, vcpus), memory (sizes, hugepages, memory
// backing), numatune, boot, boot_dev, clock (timers included),
// stop_on_reboot, disks, interfaces, graphics, serials, consoles and
// host_devices like Salt's change_xml mapping, live where libvirt can;
// with test=True it creates no disk image (Salt does) and it removes the
// disks it made when libvirt refuses the new definition. network_define
// honours vport= and tag= (Salt drops them) and undefines a network it
// defined when the start fails. Pool authentication (poolauth.go): a
// source_auth with username and password on rbd/iscsi pools makes or
// updates a libvirt secret as Salt does; pool_define removes the secret
// it made when libvirt refuses the pool (Salt leaves it) and
// pool_undefine removes the pool_<name> secret of chap pools too (Salt
// raises KeyError 'chap'). VM and disk names that would put a disk image
// outside the images directory are refused. The states (states.go,
// states_define.go) are Salt's, on these functions.
// Not yet: init's numatune and host_devices, volumes from images in pools.
package virt
