package podpools

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// A pool whose last user went while no leader kept the pools (a
// restart, a new leader) is in the cloud and in its workspace, but no
// front-end says it uses it, and nothing would look at it again. Once
// the front-ends have had NotTargetedGrace to say what they use, the
// leader lists the cluster's pod pools in the cloud (by their tags,
// lbmodel.PodPoolPort) and hands those nobody uses to the worker, which
// destroys any unused pool (the cloud refuses while a load balancer
// still forwards to one, and it tries again).

// sweepRetry is when a sweep the cloud did not answer is tried again.
const sweepRetry = 30 * time.Second

// sweepAfterGrace sweeps once NotTargetedGrace has passed since Run
// started, until one sweep has read the cloud or ctx ends.
func (p *Pools) sweepAfterGrace(ctx context.Context) {
	wait := p.opts.NotTargetedGrace
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		n, err := p.sweep(ctx)
		if err == nil {
			klog.V(2).InfoS("Pod pools nobody uses since the start: handed to the worker", "pools", n)
			return
		}
		klog.ErrorS(err, "Cannot list the cloud's pod pools; the sweep of those nobody uses is tried again", "after", sweepRetry)
		wait = sweepRetry
	}
}

// sweep queues, to be destroyed, every pod pool of the cluster in the
// cloud that no front-end said it uses since the start; it returns how
// many.
func (p *Pools) sweep(ctx context.Context) (int, error) {
	pools, err := p.cloud.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
	if err != nil {
		return 0, err
	}
	var refs []objectref.Ref
	p.mu.Lock()
	for _, tp := range pools {
		sp, ok := lbmodel.PodPoolPort(tp.Tags, p.opts.ClusterID)
		if !ok || tp.TargetTypeOrDefault() != exampleapi.TargetTypeIP {
			continue
		}
		ref := sp.Ref()
		if p.pools[ref] != nil {
			continue // used, or already going
		}
		p.pools[ref] = &pool{port: sp, users: map[string]bool{}, said: map[string]bool{}, id: tp.ID, targets: tp.Targets}
		refs = append(refs, ref)
	}
	p.mu.Unlock()
	for _, ref := range refs {
		klog.InfoS("A pod pool nobody uses since the start: destroying it", "pool", ref.Arg())
		p.queue.Add(ref)
	}
	return len(refs), nil
}
