package engine

// Sizes are the entries of the engine's in-memory structures and its
// runner's, each bounded (docs/terraform-workflow.md#memory): the objects
// it converges (live ones: a deleted object is forgotten with its
// destroy) and the node selections with a target pool.
func (e *Engine) Sizes() map[string]int {
	out := e.runner.Sizes()
	out["engine_objects"] = e.objects.len()
	out["engine_pool_selections"] = e.pools.len()
	return out
}
