package driver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/proxy/devsim"
)

// TestMergeLoadsBeforeCommit loads two merge candidates and commits once,
// as Salt's netntp/netusers/probes states do (one load_template per piece,
// commit=False, then net.config_control). What reaches the device is what
// each NAPALM driver does (napalm commit ee70e634):
//   - ios: load_merge_candidate transfers the text to flash:merge_config.txt
//     (napalm/ios/ios.py load_merge_candidate -> _load_candidate_wrapper ->
//     _xfer_file put, lines 308-322 and 764-790), replacing the file, and
//     commit_config runs "copy flash:merge_config.txt running-config"
//     (lines 562-575): only the last load is applied;
//   - eos: every load goes to the same configure session until commit or
//     discard (napalm/eos/eos.py _load_config, lines 409-419);
//   - nxos_ssh: merge_candidate += config (napalm/nxos/nxos.py
//     load_merge_candidate, lines 168-180);
//   - iosxr: load_candidate_config into the open candidate session
//     (napalm/iosxr/iosxr.py load_merge_candidate, lines 109-121).
func TestMergeLoadsBeforeCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		plat      string
		keepsBoth bool
	}{
		{devsim.PlatformIOS, false},
		{devsim.PlatformEOS, true},
		{devsim.PlatformNXOS, true},
		{devsim.PlatformIOSXR, true},
	} {
		t.Run(tc.plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, tc.plat, 1, nil)
			dev := f.Device(0)
			d := openDriver(t, f, 0)
			ctx := context.Background()
			// the device shows the address (IOS XR under an "ntp" block)
			first, second := "10.9.9.1", "10.9.9.2"
			for _, l := range []string{first, second} {
				if err := d.LoadMergeCandidate(ctx, "ntp server "+l+"\n"); err != nil {
					t.Fatalf("load %q: %v", l, err)
				}
			}
			if err := d.CommitConfig(ctx, "", 0); err != nil {
				t.Fatal(err)
			}
			running := dev.RunningConfig()
			if !strings.Contains(running, second) {
				t.Fatalf("the last load is not applied:\n%s", running)
			}
			if got := strings.Contains(running, first); got != tc.keepsBoth {
				t.Fatalf("first load applied = %v, NAPALM's %s driver: %v\n%s", got, tc.plat, tc.keepsBoth, running)
			}
		})
	}
}
