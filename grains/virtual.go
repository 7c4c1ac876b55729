package grains

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// virtual is core._virtual for Linux: the detection commands Salt runs
// (virt-what or systemd-detect-virt, dmidecode, lspci), then the /proc and
// /sys heuristics.
func (h *host) virtual(ctx context.Context, osdata *payload.Map) *payload.Map {
	virt := "physical"
	subtype := ""
	cmds := []string{"systemd-detect-virt", "virt-what", "dmidecode"}
	if h.which("virt-what") != "" {
		cmds = []string{"virt-what"}
	}
	if v, ok := h.opt("enable_lspci"); !ok || v == true {
		if h.exists("/proc/bus/pci") {
			cmds = append(cmds, "lspci")
		}
	}
	_, node, _, _, _ := uname()
	if strings.Contains(node, "BrandZ virtual linux") {
		return payload.NewMap("virtual", "zone")
	}
cmdLoop:
	for _, command := range cmds {
		if h.which(command) == "" {
			continue
		}
		out, code, err := h.exec(ctx, command)
		if err != nil || code > 0 {
			continue
		}
		switch command {
		case "systemd-detect-virt":
			switch {
			case out == "qemu" || out == "kvm" || out == "oracle" || out == "xen" || out == "bochs" ||
				out == "chroot" || out == "uml" || out == "systemd-nspawn":
				virt = out
				break cmdLoop
			case strings.Contains(out, "vmware"):
				virt = "VMware"
				break cmdLoop
			case strings.Contains(out, "microsoft"):
				virt = "VirtualPC"
				break cmdLoop
			case strings.Contains(out, "lxc"):
				virt, subtype = "container", "LXC"
				break cmdLoop
			case strings.Contains(out, "amazon"):
				virt, subtype = "Nitro", "Amazon EC2"
				break cmdLoop
			}
		case "virt-what":
		lines:
			for _, line := range py.SplitLines(out, false) {
				switch {
				case line == "kvm" || line == "qemu" || line == "uml" || line == "xen":
					virt = line
				case strings.Contains(line, "lxc"):
					virt, subtype = "container", "LXC"
				case strings.Contains(line, "vmware"):
					virt = "VMware"
				case strings.Contains(line, "parallels"):
					virt = "Parallels"
				case strings.Contains(line, "hyperv"):
					virt = "HyperV"
				case line == "ibm_power-kvm":
					virt = "kvm"
				case line == "ibm_power-lpar_shared":
					virt, subtype = "LPAR", "shared"
				case line == "ibm_power-lpar_dedicated":
					virt, subtype = "LPAR", "dedicated"
				default:
					continue
				}
				break lines
			}
			break cmdLoop
		case "dmidecode":
			virt, subtype = dmidecodeVirtual(out, virt, subtype)
			break cmdLoop
		case "lspci":
			model := strings.ToLower(out)
			switch {
			case strings.Contains(model, "vmware"):
				virt = "VMware"
			case strings.Contains(model, "virtualbox"):
				virt = "VirtualBox"
			case strings.Contains(model, "qemu"), strings.Contains(model, "virtio"):
				virt = "kvm"
			}
			break cmdLoop
		}
	}

	if h.isDir("/proc") {
		var self, init syscall.Stat_t
		if syscall.Stat(h.path("/"), &self) == nil && syscall.Stat(h.path("/proc/1/root/."), &init) == nil {
			if self != init {
				subtype = "chroot"
			}
		}
	}
	if h.isDir("/proc/vz") {
		if h.isFile("/proc/vz/version") {
			virt = "openvzhn"
		} else if h.isFile("/proc/vz/veinfo") {
			virt = "openvzve"
		}
	}
	if status, err := h.readFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(status, "\n") {
			if m := reEnvID.FindStringSubmatch(line); m != nil {
				if n, _ := strconv.Atoi(m[1]); n != 0 {
					virt = "openvzve"
				} else {
					virt = "openvzhn"
				}
			}
		}
	}
	if h.isDir("/proc/sys/xen") || h.isDir("/sys/bus/xen") || h.isDir("/proc/xen") {
		switch {
		case h.isFile("/proc/xen/xsd_kva"):
			subtype = "Xen Dom0"
		case osdata.Str("productname") == "HVM domU":
			subtype = "Xen HVM DomU"
		case h.isFile("/proc/xen/capabilities"):
			if caps, err := h.readFile("/proc/xen/capabilities"); err == nil {
				if strings.Contains(caps, "control_d") {
					subtype = "Xen Dom0"
				} else {
					subtype = "Xen PV DomU"
				}
			}
		case h.isDir("/sys/bus/xen"):
			if h.isDir("/sys/bus/xen/drivers/xenconsole") {
				subtype = "Xen PV DomU"
			} else if strings.Contains(strings.ToLower(h.output(ctx, "dmesg")), "xen:") {
				subtype = "Xen PV DomU"
			}
		}
		if strings.Contains(strings.ToLower(subtype), "dom") {
			virt = "xen"
		}
	}
	if cpu, err := h.readFile("/proc/cpuinfo"); err == nil && strings.Contains(cpu, "QEMU Virtual CPU") {
		virt = "kvm"
	}
	if prod, err := h.readFile("/sys/devices/virtual/dmi/id/product_name"); err == nil {
		switch {
		case strings.Contains(prod, "VirtualBox"):
			virt = "VirtualBox"
		case strings.Contains(prod, "RHEV Hypervisor"):
			virt, subtype = "kvm", "rhev"
		case strings.Contains(prod, "oVirt Node"):
			virt, subtype = "kvm", "ovirt"
		case strings.Contains(prod, "Google"):
			virt = "gce"
		case strings.Contains(prod, "BHYVE"):
			virt = "bhyve"
		}
	}
	if cg, err := h.readFile("/proc/1/cgroup"); err == nil {
		switch {
		case strings.Contains(cg, ":/lxc/"):
			virt, subtype = "container", "LXC"
		case strings.Contains(cg, ":/kubepods/"):
			subtype = "kubernetes"
		case strings.Contains(cg, ":/libpod_parent/"):
			subtype = "libpod"
		case strings.Contains(cg, ":/system.slice/docker") || strings.Contains(cg, ":/docker/") || strings.Contains(cg, ":/docker-ce/"):
			virt, subtype = "container", "Docker"
		}
	}
	if subtype != "LXC" {
		if env, err := h.readFile("/proc/1/environ"); err == nil && strings.Contains(env, "container=lxc") {
			virt, subtype = "container", "LXC"
		}
	}
	if subtype != "" && virt == "physical" {
		virt = "virtual"
	}
	if virt == "qemu" || virt == "kvm" || virt == "xen" || virt == "amazon" {
		if h.which("dmidecode") != "" {
			out, _, err := h.exec(ctx, "dmidecode", "-t", "system")
			if err == nil {
				if strings.Contains(out, "Manufacturer: Amazon EC2") {
					if virt != "xen" {
						virt = "Nitro"
					}
					subtype = "Amazon EC2"
					if m := reProductName.FindStringSubmatch(out); m != nil {
						subtype = "Amazon EC2 (" + m[1] + ")"
					}
				} else if reAmazonVersion.MatchString(out) {
					subtype = "Amazon EC2"
				}
			}
		}
	}
	g := payload.NewMap("virtual", virt)
	if subtype != "" {
		g.Set("virtual_subtype", subtype)
	}
	return g
}

var (
	reEnvID         = regexp.MustCompile(`^envID:\s+(\d+)$`)
	reProductName   = regexp.MustCompile(`Product Name: ([^\r\n]*)`)
	reAmazonVersion = regexp.MustCompile(`Version: [^\r\n]+\.amazon`)
)

// dmidecodeVirtual reads `dmidecode` output the way core._virtual does.
func dmidecodeVirtual(out, virt, subtype string) (string, string) {
	has := func(s string) bool { return strings.Contains(out, s) }
	if has("Vendor: QEMU") || has("Manufacturer: QEMU") || has("Vendor: Bochs") || has("Manufacturer: Bochs") {
		virt = "kvm"
	}
	switch {
	case has("BHYVE"):
		virt = "bhyve"
	case has("Manufacturer: oVirt"):
		virt, subtype = "kvm", "ovirt"
	case has("Product Name: RHEV Hypervisor"):
		virt, subtype = "kvm", "rhev"
	case has("VirtualBox"):
		virt = "VirtualBox"
	case has("VMware"):
		virt = "VMware"
	case has(": Microsoft") && has("Virtual Machine"):
		virt = "VirtualPC"
	case has("Parallels Software"):
		virt = "Parallels"
	case has("Manufacturer: Google"):
		virt = "kvm"
	case has("Vendor: SeaBIOS"):
		virt = "kvm"
	}
	return virt, subtype
}

// virtualHV is core._virtual_hv (Xen hypervisor details from sysfs).
func (h *host) virtualHV(osdata *payload.Map) *payload.Map {
	g := &payload.Map{}
	if !strings.Contains(osdata.Str("virtual"), "xen") {
		return g
	}
	var parts []string
	for _, fn := range []string{"major", "minor", "extra"} {
		s, err := h.readFile("/sys/hypervisor/version/" + fn)
		if err != nil {
			parts = nil
			break
		}
		parts = append(parts, strings.TrimSpace(s))
	}
	if len(parts) == 3 {
		g.Set("virtual_hv_version", parts[0]+"."+parts[1]+parts[2])
		g.Set("virtual_hv_version_info", strList(parts))
	}
	features := []struct {
		bit  uint
		name string
	}{
		{0, "writable_page_tables"}, {1, "writable_descriptor_tables"}, {2, "auto_translated_physmap"},
		{3, "supervisor_mode_kernel"}, {4, "pae_pgdir_above_4gb"}, {5, "mmu_pt_update_preserve_ad"},
		{7, "gnttab_map_avail_bits"}, {8, "hvm_callback_vector"}, {9, "hvm_safe_pvclock"},
		{10, "hvm_pirqs"}, {11, "dom0"}, {12, "grant_map_identity"}, {13, "memory_op_vnode_supported"},
		{14, "ARM_SMCCC_supported"},
	}
	if s, err := h.readFile("/sys/hypervisor/properties/features"); err == nil {
		s = strings.TrimSpace(s)
		if n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 64); err == nil {
			enabled := []any{}
			for _, f := range features {
				if n&(1<<f.bit) != 0 {
					enabled = append(enabled, f.name)
				}
			}
			g.Set("virtual_hv_features", s)
			g.Set("virtual_hv_features_list", enabled)
		}
	}
	return g
}
