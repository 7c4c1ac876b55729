package payload

import "testing"

// BenchmarkMapSetNewKeys builds a return-sized map with Set and constant
// keys, as the master and the minion do for every return.
func BenchmarkMapSetNewKeys(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m := &Map{items: make([]Item, 0, 8)}
		m.Set("return", true).Set("retcode", int64(0)).Set("success", true).Set("out", "nested").
			Set("fun", "test.ping").Set("fun_args", nil).Set("jid", "20261128152101123456").Set("id", "sw-0001")
	}
}
