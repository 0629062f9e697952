package ccm

import (
	"errors"
	"time"

	"k8s.io/component-base/metrics"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/ccmmetrics"
	"github.com/example/cloud-provider-example/review"
)

// Metrics on the CCM's /metrics: terraform's processes and the fast path
// (the review's own are package review's).
var (
	terraformRuns = metrics.NewCounterVec(ccmmetrics.CounterOpts("terraform_runs_total",
		"Terraform processes run, by command (init, plan, apply, show, ...) and result (success, error, locked)."),
		[]string{"operation", "result"})
	terraformDuration = metrics.NewHistogramVec(ccmmetrics.HistogramOpts("terraform_run_duration_seconds",
		"Duration of terraform processes, by command.", []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}),
		[]string{"operation"})
	fastPathSkips = metrics.NewCounter(ccmmetrics.CounterOpts("fast_path_skips_total",
		"Reconciles answered from the last apply's record without starting terraform."))
	lockWaits = metrics.NewCounter(ccmmetrics.CounterOpts("state_lock_waits_total",
		"Terraform commands that found the state locked by someone else."))
	shardOwned = metrics.NewGaugeVec(ccmmetrics.GaugeOpts("shard_owned",
		"1 for each shard this replica holds (its Lease names the replica), 0 for the others (sharding: docs/adr/0017)."), []string{"shard"})
	shardMoves = metrics.NewCounterVec(ccmmetrics.CounterOpts("shard_moves_total",
		"Shards this replica took (taken) or gave back (given)."), []string{"direction"})
	shardChanges = metrics.NewCounterVec(ccmmetrics.CounterOpts("shard_changes_total",
		"Load balancer changes this replica applied, by shard."), []string{"shard"})
	shardQueueLength = metrics.NewGaugeVec(ccmmetrics.GaugeOpts("shard_queue_length",
		"Services of each shard this replica holds that wait for the service controller: not converged at their current spec and annotations, or to be deleted (0 for the shards it does not hold)."), []string{"shard"})
)

func registerMetrics() {
	ccmmetrics.Register(terraformRuns, terraformDuration, fastPathSkips, lockWaits, shardOwned, shardMoves, shardChanges, shardQueueLength)
	review.RegisterMetrics()
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
