//go:build linux && cgo

package eauth

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// The few PAM declarations needed (Linux-PAM ABI), so no headers are
// required at build time.
struct pam_message { int msg_style; const char *msg; };
struct pam_response { char *resp; int resp_retcode; };
struct pam_conv {
	int (*conv)(int, const struct pam_message **, struct pam_response **, void *);
	void *appdata_ptr;
};
#define GS_PAM_PROMPT_ECHO_OFF 1
#define GS_PAM_PROMPT_ECHO_ON 2
#define GS_PAM_CONV_ERR 19
#define GS_PAM_BUF_ERR 5

typedef int (*pam_start_fn)(const char *, const char *, const struct pam_conv *, void **);
typedef int (*pam_int_fn)(void *, int);

static int gs_conv(int n, const struct pam_message **msg, struct pam_response **resp, void *appdata) {
	if (n <= 0 || n > 32) return GS_PAM_CONV_ERR;
	struct pam_response *r = calloc((size_t)n, sizeof(struct pam_response));
	if (!r) return GS_PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style == GS_PAM_PROMPT_ECHO_OFF || msg[i]->msg_style == GS_PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup((const char *)appdata);
		}
	}
	*resp = r;
	return 0;
}

// gs_pam_auth returns 0 on success, a PAM error code, or -1 when libpam
// cannot be loaded.
static int gs_pam_auth(const char *service, const char *user, const char *password) {
	void *lib = dlopen("libpam.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!lib) return -1;
	pam_start_fn start = (pam_start_fn)dlsym(lib, "pam_start");
	pam_int_fn authn = (pam_int_fn)dlsym(lib, "pam_authenticate");
	pam_int_fn acct = (pam_int_fn)dlsym(lib, "pam_acct_mgmt");
	pam_int_fn end = (pam_int_fn)dlsym(lib, "pam_end");
	if (!start || !authn || !acct || !end) { dlclose(lib); return -1; }
	struct pam_conv conv = { gs_conv, (void *)password };
	void *h = NULL;
	int rc = start(service, user, &conv, &h);
	if (rc == 0) rc = authn(h, 0);
	if (rc == 0) rc = acct(h, 0);
	if (h) end(h, rc);
	dlclose(lib);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

func pamAuthenticate(service, username, password string) (bool, error) {
	if strings.ContainsRune(username, 0) || strings.ContainsRune(password, 0) || strings.ContainsRune(service, 0) {
		return false, nil
	}
	cs, cu, cp := C.CString(service), C.CString(username), C.CString(password)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cu))
	defer func() {
		C.memset(unsafe.Pointer(cp), 0, C.size_t(len(password)))
		C.free(unsafe.Pointer(cp))
	}()
	rc := C.gs_pam_auth(cs, cu, cp)
	switch {
	case rc == -1:
		return false, ErrPAMUnavailable
	case rc != 0:
		return false, fmt.Errorf("eauth: pam: error %d", int(rc))
	}
	return true, nil
}
