package ccm

import (
	"errors"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/runner"
)

// Metrics on the CCM's /metrics (component-base legacy registry, served
// by the cloud-provider app): terraform's processes and the fast path
// (the review's own are package review's).
var (
	terraformRuns = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "example_ccm", Name: "terraform_runs_total", StabilityLevel: metrics.ALPHA,
		Help: "Terraform processes run, by command (init, plan, apply, show, ...) and result (success, error, locked).",
	}, []string{"operation", "result"})
	terraformDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: "example_ccm", Name: "terraform_run_duration_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Duration of terraform processes, by command.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"operation"})
	fastPathSkips = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "example_ccm", Name: "fast_path_skips_total", StabilityLevel: metrics.ALPHA,
		Help: "Reconciles answered from the last apply's record without starting terraform.",
	})
	lockWaits = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "example_ccm", Name: "state_lock_waits_total", StabilityLevel: metrics.ALPHA,
		Help: "Terraform commands that found the state locked by someone else.",
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(terraformRuns, terraformDuration, fastPathSkips, lockWaits)
	})
	review.RegisterMetrics()
}

// observeTerraform is the runner's Observe hook.
func observeTerraform(op string, err error, d time.Duration) {
	result := "success"
	switch {
	case errors.Is(err, runner.ErrStateLocked):
		result = "locked"
		lockWaits.Inc()
	case err != nil:
		result = "error"
	}
	terraformRuns.WithLabelValues(op, result).Inc()
	terraformDuration.WithLabelValues(op).Observe(d.Seconds())
}
