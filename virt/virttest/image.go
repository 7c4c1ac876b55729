package virttest

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Image describes a test disk image.
type Image struct {
	// Root is copied into the image's filesystem.
	Root string
	// SizeMB is the filesystem size (default 64).
	SizeMB int
	// Boot installs extlinux and its MBR so the image boots /boot/vmlinuz
	// with /boot/initrd.gz and Append.
	Boot   bool
	Append string
}

// BuildRaw makes a raw disk image at path: an MBR partition table with one
// bootable Linux partition at 1 MiB holding an ext2 filesystem with the
// files of img.Root. It needs root (extlinux needs the filesystem
// mounted) only when img.Boot is set; it skips the test with one line when
// a tool is missing.
func BuildRaw(t testing.TB, path string, img Image) {
	t.Helper()
	tools := []string{"mkfs.ext4", "dd"}
	if img.Boot {
		tools = append(tools, "extlinux", "mount", "umount")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("virt: %s is not installed; skipping the disk-image test", tool)
		}
	}
	mbr := "/usr/lib/syslinux/mbr/mbr.bin"
	if img.Boot {
		if _, err := os.Stat(mbr); err != nil {
			t.Skip("virt: syslinux-common's mbr.bin is not installed; skipping the bootable-image test")
		}
		if os.Geteuid() != 0 {
			t.Skip("virt: installing extlinux needs root; skipping the bootable-image test")
		}
	}
	size := img.SizeMB
	if size == 0 {
		size = 64
	}
	work := t.TempDir()
	part := filepath.Join(work, "part.img")
	// ext2: SYSLINUX 6.04 cannot load files from every ext4 layout.
	run(t, "mkfs.ext4", "-q", "-F", "-t", "ext2", "-d", img.Root, part, strconv.Itoa(size)+"M")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(size+1) << 20); err != nil {
		t.Fatal(err)
	}
	// One MBR entry: bootable, Linux (0x83), from sector 2048.
	mbrTable := make([]byte, 512)
	e := mbrTable[446:462]
	e[0], e[1], e[2], e[3] = 0x80, 0xfe, 0xff, 0xff
	e[4], e[5], e[6], e[7] = 0x83, 0xfe, 0xff, 0xff
	binary.LittleEndian.PutUint32(e[8:12], 2048)
	binary.LittleEndian.PutUint32(e[12:16], uint32(size)*2048)
	mbrTable[510], mbrTable[511] = 0x55, 0xaa
	_, err = f.WriteAt(mbrTable[446:], 446)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	run(t, "dd", "if="+part, "of="+path, "bs=1M", "seek=1", "conv=notrunc", "status=none")
	if img.Boot {
		mnt := filepath.Join(work, "mnt")
		if err := os.MkdirAll(mnt, 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, "mount", "-o", "loop,offset=1048576", path, mnt)
		conf := "DEFAULT gsalt\nPROMPT 0\nTIMEOUT 0\nLABEL gsalt\n  LINUX /boot/vmlinuz\n  INITRD /boot/initrd.gz\n  APPEND " + img.Append + "\n"
		err := os.MkdirAll(filepath.Join(mnt, "boot", "extlinux"), 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(mnt, "boot", "extlinux", "extlinux.conf"), []byte(conf), 0o644)
		}
		var out []byte
		if err == nil {
			out, err = exec.Command("extlinux", "--install", filepath.Join(mnt, "boot", "extlinux")).CombinedOutput()
		}
		if uerr := exec.Command("umount", mnt).Run(); uerr != nil && err == nil {
			err = uerr
		}
		if err != nil {
			t.Fatalf("extlinux: %v %s", err, out)
		}
		run(t, "dd", "if="+mbr, "of="+path, "bs=440", "count=1", "conv=notrunc", "status=none")
	}
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
