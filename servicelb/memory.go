package servicelb

// Sizes are the Service load balancing's structures kept per object
// (docs/terraform-workflow.md#memory): the applied load balancers' asks
// of their pools, the groups' applied members and locks, the Services
// released to a group, what the node lifecycle said and keeps draining,
// and the caches of the tenancy rules' cloud reads.
func (l *LoadBalancers) Sizes() map[string]int {
	sh := l.shared
	released := 0
	sh.released.Range(func(any, any) bool { released++; return true })
	out := map[string]int{"ccm_released_services": released}
	sh.lifecycle.asks.mu.Lock()
	out["ccm_pool_asks"] = len(sh.lifecycle.asks.asks)
	sh.lifecycle.asks.mu.Unlock()
	sh.groups.mu.Lock()
	out["ccm_group_locks"], out["ccm_group_members"] = len(sh.groups.locks), len(sh.groups.applied)
	sh.groups.mu.Unlock()
	n := sh.lifecycle
	n.mu.Lock()
	out["ccm_node_messages"], out["ccm_draining_nodes"] = len(n.said), len(n.draining)
	n.mu.Unlock()
	out["ccm_certificate_tags"], out["ccm_load_balancer_tags"], out["ccm_load_balancer_names"] = sh.refs.certs.len(), sh.refs.lbs.len(), sh.refs.names.len()
	return out
}
