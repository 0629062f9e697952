package ccm

import (
	"github.com/example/cloud-provider-example/internal/ccmmetrics"
)

// The sizes of the controller's in-memory structures kept per object,
// plan, process or event, each bounded (docs/terraform-workflow.md#memory),
// on /metrics as example_ccm_memory_entries{structure}.

func (c *cloud) trackMemory() {
	ccmmetrics.Track("engine", c.engine.Sizes)
	ccmmetrics.Track("review", c.board.Sizes)
	ccmmetrics.Track("ccm", c.lb.sizes)
	ccmmetrics.Track("instances", func() map[string]int {
		return map[string]int{"metadata_cache": c.instances.cache.size()}
	})
}

// sizes are the load balancers' structures: the applied load balancers'
// asks of their pools, the groups' applied members and locks, the
// Services released to a group, what the node lifecycle said and keeps
// draining, and the caches of the tenancy rules' cloud reads.
func (l *loadBalancers) sizes() map[string]int {
	released := 0
	l.released.Range(func(any, any) bool { released++; return true })
	out := map[string]int{"ccm_released_services": released}
	l.lifecycle.asks.mu.Lock()
	out["ccm_pool_asks"] = len(l.lifecycle.asks.asks)
	l.lifecycle.asks.mu.Unlock()
	l.groups.mu.Lock()
	out["ccm_group_locks"], out["ccm_group_members"] = len(l.groups.locks), len(l.groups.applied)
	l.groups.mu.Unlock()
	n := l.lifecycle
	n.mu.Lock()
	out["ccm_node_messages"], out["ccm_draining_nodes"] = len(n.said), len(n.draining)
	n.mu.Unlock()
	out["ccm_certificate_tags"], out["ccm_load_balancer_tags"], out["ccm_load_balancer_names"] = l.refs.certs.len(), l.refs.lbs.len(), l.refs.names.len()
	return out
}
