package review

import (
	"sync"

	"k8s.io/component-base/metrics"

	"github.com/example/cloud-provider-example/internal/ccmmetrics"
)

// The review's metrics on the CCM's /metrics: what waits for people and
// what drifted, for alerts; terraform's own are the provider's (ccm).
var (
	plansAwaitingApproval = metrics.NewGauge(ccmmetrics.GaugeOpts("plans_awaiting_approval",
		"Plans recorded and waiting for approval (manual policy)."))
	driftDetected = metrics.NewCounter(ccmmetrics.CounterOpts("drift_detected_total",
		"Drift checks that found the cloud changed outside Terraform."))
	workspacesByPhase = metrics.NewGaugeVec(ccmmetrics.GaugeOpts("workspaces",
		"Workspaces by phase of their last reconcile (applied, awaiting-approval, planned, denied, failed)."),
		[]string{"phase"})
)

// RegisterMetrics registers the review's metrics with the legacy registry
// the cloud-provider app serves (again: no-op).
func RegisterMetrics() {
	ccmmetrics.Register(plansAwaitingApproval, driftDetected, workspacesByPhase)
}

// phases tracks each workspace's phase for the workspaces gauge.
type phases struct {
	mu sync.Mutex
	m  map[string]string
}

// len is how many workspaces have a phase.
func (p *phases) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
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
