//go:build libvirt_dlopen

package virt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// gsalt_probe opens the library and the symbols libvirt-go needs before
// its first call: libvirt-go dereferences virConnectAuthPtrDefault without
// checking that the library loaded. The handle stays open (dlopen
// reference counts it). Returns NULL or dlerror's text.
static const char *gsalt_probe(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return dlerror();
	}
	if (dlsym(h, "virConnectAuthPtrDefault") == NULL) {
		return "virConnectAuthPtrDefault not found";
	}
	return NULL;
}
*/
import "C"

import (
	"log/slog"
	"sync"
	"unsafe"
)

var probeOnce = sync.OnceValue(func() error { return probeLibrary("libvirt.so.0") })

// probeLibrary checks that name loads with libvirt's symbols; otherwise
// it logs dlopen's reason and returns ErrNoLibvirt.
func probeLibrary(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	if msg := C.gsalt_probe(cname); msg != nil {
		slog.Debug("virt: cannot load libvirt", "library", name, "reason", C.GoString(msg))
		return ErrNoLibvirt
	}
	return nil
}
