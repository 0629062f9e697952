package review

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The review's metrics on the CCM's /metrics (component-base legacy
// registry, served by the cloud-provider app): what waits for people and
// what drifted, for alerts; terraform's own are the provider's (ccm).
var (
	plansAwaitingApproval = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: "example_ccm", Name: "plans_awaiting_approval", StabilityLevel: metrics.ALPHA,
		Help: "Plans recorded and waiting for approval (manual policy).",
	})
	driftDetected = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "example_ccm", Name: "drift_detected_total", StabilityLevel: metrics.ALPHA,
		Help: "Drift checks that found the cloud changed outside Terraform.",
	})
	workspacesByPhase = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "example_ccm", Name: "workspaces", StabilityLevel: metrics.ALPHA,
		Help: "Workspaces by phase of their last reconcile (applied, awaiting-approval, planned, denied, failed).",
	}, []string{"phase"})
)

var registerOnce sync.Once

// RegisterMetrics registers the review's metrics, once, with the legacy
// registry the cloud-provider app serves.
func RegisterMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(plansAwaitingApproval, driftDetected, workspacesByPhase)
	})
}

// phases tracks each workspace's phase for the workspaces gauge.
type phases struct {
	mu sync.Mutex
	m  map[string]string
}

func (p *phases) set(workspace, phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]string{}
	}
	if phase == "" {
		delete(p.m, workspace)
	} else {
		p.m[workspace] = phase
	}
	counts := map[string]float64{"applied": 0, "awaiting-approval": 0, "planned": 0, "denied": 0, "failed": 0}
	for _, ph := range p.m {
		counts[ph]++
	}
	for ph, n := range counts {
		workspacesByPhase.WithLabelValues(ph).Set(n)
	}
	plansAwaitingApproval.Set(counts["awaiting-approval"])
}
