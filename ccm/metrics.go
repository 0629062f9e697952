package ccm

import (
	"errors"
	"time"

	"k8s.io/component-base/metrics"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/ccmmetrics"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/servicelb"
)

// Metrics on the CCM's /metrics: terraform's processes and the shards'
// moves (the review's own are package review's, the Services' load
// balancing's package servicelb's).
var (
	terraformRuns = metrics.NewCounterVec(ccmmetrics.CounterOpts("terraform_runs_total",
		"Terraform processes run, by command (init, plan, apply, show, ...) and result (success, error, locked)."),
		[]string{"operation", "result"})
	terraformDuration = metrics.NewHistogramVec(ccmmetrics.HistogramOpts("terraform_run_duration_seconds",
		"Duration of terraform processes, by command.", []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}),
		[]string{"operation"})
	providerRequests = metrics.NewCounterVec(ccmmetrics.CounterOpts("provider_requests_total",
		"Requests of terraform processes the attached provider could answer from memory (an apply asking again what its plan asked), by RPC and answer (remembered, served)."),
		[]string{"rpc", "answer"})
	lockWaits = metrics.NewCounter(ccmmetrics.CounterOpts("state_lock_waits_total",
		"Terraform commands that found the state locked by someone else."))
	shardMoves = metrics.NewCounterVec(ccmmetrics.CounterOpts("shard_moves_total",
		"Shards this replica took (taken) or gave back (given)."), []string{"direction"})
)

func registerMetrics() {
	ccmmetrics.Register(terraformRuns, terraformDuration, providerRequests, lockWaits, shardMoves)
	review.RegisterMetrics()
	servicelb.RegisterMetrics()
}

// observeRemembered is the runner's ObserveRemembered hook.
func observeRemembered(rpc string, remembered bool) {
	answer := "served"
	if remembered {
		answer = "remembered"
	}
	providerRequests.WithLabelValues(rpc, answer).Inc()
}

// observeTerraform is the runner's Observe hook.
func observeTerraform(op string, err error, d time.Duration) {
	result := "success"
	switch {
	case errors.Is(err, engine.ErrStateLocked):
		result = "locked"
		lockWaits.Inc()
	case err != nil:
		result = "error"
	}
	terraformRuns.WithLabelValues(op, result).Inc()
	terraformDuration.WithLabelValues(op).Observe(d.Seconds())
}

// shardMoved counts a shard taken or given back (given: this replica was
// its holder).
func shardMoved(given bool) {
	if given {
		shardMoves.WithLabelValues("given").Inc()
		return
	}
	shardMoves.WithLabelValues("taken").Inc()
}
