package health

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// The helpers below expose counters that live where the counted things
// happen (atomic counters of the master, the bus, the job cache, ...):
// the metrics read them at scrape time, so the hot paths never touch a
// Prometheus type.

// Name is Namespace_sub_name.
func Name(sub, name string) string { return prometheus.BuildFQName(Namespace, sub, name) }

// CounterFunc is a counter read from fn.
func CounterFunc(sub, name, help string, fn func() uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Subsystem: sub, Name: name, Help: help},
		func() float64 { return float64(fn()) })
}

// GaugeFunc is a gauge read from fn.
func GaugeFunc(sub, name, help string, fn func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Subsystem: sub, Name: name, Help: help}, fn)
}

// vecFunc is a metric family with one label whose values are read at
// scrape time.
type vecFunc struct {
	desc  *prometheus.Desc
	vt    prometheus.ValueType
	fixed []string
	fn    func() map[string]float64
}

// CounterVecFunc is a counter family with one label: fn returns the
// value of each label value. The values in fixed are always exported
// (0 when fn has none), so the series exist from the start.
func CounterVecFunc(sub, name, help, label string, fixed []string, fn func() map[string]float64) prometheus.Collector {
	return &vecFunc{desc: prometheus.NewDesc(Name(sub, name), help, []string{label}, nil), vt: prometheus.CounterValue, fixed: fixed, fn: fn}
}

// GaugeVecFunc is GaugeVecFunc's gauge twin.
func GaugeVecFunc(sub, name, help, label string, fixed []string, fn func() map[string]float64) prometheus.Collector {
	return &vecFunc{desc: prometheus.NewDesc(Name(sub, name), help, []string{label}, nil), vt: prometheus.GaugeValue, fixed: fixed, fn: fn}
}

func (v *vecFunc) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

func (v *vecFunc) Collect(ch chan<- prometheus.Metric) {
	vals := v.fn()
	keys := make([]string, 0, len(vals)+len(v.fixed))
	seen := map[string]bool{}
	for _, k := range v.fixed {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for k := range vals {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(v.desc, v.vt, vals[k], k)
	}
}
