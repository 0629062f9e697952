package servicelb

import (
	"k8s.io/component-base/metrics"

	"github.com/example/cloud-provider-example/internal/ccmmetrics"
)

// Metrics on the CCM's /metrics of the Services' load balancing: the fast
// path and the shards (terraform's processes are package ccm's, the
// review's package review's).
var (
	fastPathSkips = metrics.NewCounter(ccmmetrics.CounterOpts("fast_path_skips_total",
		"Reconciles answered from the last apply's record without starting terraform."))
	shardOwned = metrics.NewGaugeVec(ccmmetrics.GaugeOpts("shard_owned",
		"1 for each shard this replica holds (its Lease names the replica), 0 for the others (sharding: docs/adr/0017)."), []string{"shard"})
	shardChanges = metrics.NewCounterVec(ccmmetrics.CounterOpts("shard_changes_total",
		"Load balancer changes this replica applied, by shard."), []string{"shard"})
	shardQueueLength = metrics.NewGaugeVec(ccmmetrics.GaugeOpts("shard_queue_length",
		"Services of each shard this replica holds that wait for the service controller: not converged at their current spec and annotations, or to be deleted (0 for the shards it does not hold)."), []string{"shard"})
)

// RegisterMetrics registers them (once per process: ccmmetrics.Register).
func RegisterMetrics() {
	ccmmetrics.Register(fastPathSkips, shardOwned, shardChanges, shardQueueLength)
}
