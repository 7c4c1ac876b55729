package devsim

import (
	"context"
	"runtime"
	"testing"
)

// BenchmarkDeviceMemory reports the live heap of a 500-device fleet once every device has built
// its state (the startup configuration rendered from the platform's template and parsed):
// heapB/device is all of it divided by the devices, stateB/device what the devices' state adds,
// fleetB the fleet before any device state (listeners, SSH configs, the parsed platform
// definition, which is shared by all devices).
func BenchmarkDeviceMemory(b *testing.B) {
	const n = 500
	for _, plat := range []string{PlatformIOS, PlatformEOS, PlatformNXOS, PlatformIOSXR} {
		b.Run(plat, func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				var m0 runtime.MemStats
				runtime.ReadMemStats(&m0)
				f, err := Start(context.Background(), Options{Platform: plat, Devices: n})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var mf runtime.MemStats
				runtime.ReadMemStats(&mf)
				for i := range n {
					_ = f.Device(i).RunningConfig()
				}
				runtime.GC()
				var m1 runtime.MemStats
				runtime.ReadMemStats(&m1)
				b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "heapB/device")
				b.ReportMetric(float64(m1.HeapAlloc-mf.HeapAlloc)/n, "stateB/device")
				b.ReportMetric(float64(mf.HeapAlloc-m0.HeapAlloc), "fleetB")
				_ = f.Close()
			}
		})
	}
}
