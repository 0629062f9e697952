// Package ccmmetrics makes the controller's own metrics (package ccm's
// terraform runs and fast path, package review's approvals and drift): each
// named example_ccm_<name>, alpha, and registered with the component-base
// legacy registry that the cloud-provider app serves at /metrics.
package ccmmetrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// namespace prefixes every metric's name.
const namespace = "example_ccm"

func opts(name, help string) metrics.KubeOpts {
	return metrics.KubeOpts{Namespace: namespace, Name: name, Help: help, StabilityLevel: metrics.ALPHA}
}

// CounterOpts are the options of the counter example_ccm_<name>.
func CounterOpts(name, help string) *metrics.CounterOpts {
	o := metrics.CounterOpts(opts(name, help))
	return &o
}

// GaugeOpts are the options of the gauge example_ccm_<name>.
func GaugeOpts(name, help string) *metrics.GaugeOpts {
	o := metrics.GaugeOpts(opts(name, help))
	return &o
}

// HistogramOpts are the options of the histogram example_ccm_<name>.
func HistogramOpts(name, help string, buckets []float64) *metrics.HistogramOpts {
	o := opts(name, help)
	return &metrics.HistogramOpts{Namespace: o.Namespace, Name: o.Name, Help: o.Help, StabilityLevel: o.StabilityLevel, Buckets: buckets}
}

var (
	mu         sync.Mutex
	registered = map[metrics.Registerable]bool{}
)

// Register registers each collector with the legacy registry; one
// already registered stays as it is, so wiring may run more than once
// (one provider per test, say).
func Register(cs ...metrics.Registerable) {
	mu.Lock()
	defer mu.Unlock()
	for _, c := range cs {
		if !registered[c] {
			legacyregistry.MustRegister(c)
			registered[c] = true
		}
	}
}
