package ccmmetrics

import (
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// A metric is served as example_ccm_<name>, alpha; registering it again
// (a second provider in the same process) is not a duplicate.
func TestRegister(t *testing.T) {
	c := metrics.NewCounterVec(CounterOpts("ccmmetrics_test_total", "A test counter."), []string{"result"})
	h := metrics.NewHistogramVec(HistogramOpts("ccmmetrics_test_seconds", "A test histogram.", []float64{1, 2}), []string{"op"})
	Register(c, h)
	Register(c, h)
	c.WithLabelValues("success").Inc()
	h.WithLabelValues("plan").Observe(1.5)

	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range families {
		seen[f.GetName()] = f.GetHelp()
	}
	for name, help := range map[string]string{
		"example_ccm_ccmmetrics_test_total":   "[ALPHA] A test counter.",
		"example_ccm_ccmmetrics_test_seconds": "[ALPHA] A test histogram.",
	} {
		if seen[name] != help {
			t.Errorf("%s: help %q, want %q (served: %v)", name, seen[name], help, seen)
		}
	}
}
