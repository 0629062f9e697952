package ccm

import (
	"context"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/podpools"
)

// podPoolWorkers apply pod pools at once: each is a small workspace, and
// a rollout of many Services rolls many.
const podPoolWorkers = 4

// keepPodPools starts, on the leader, the pod pools (package podpools)
// that Services of target type ip and Gateways forward to, through the
// engine and review, under the target pools' apply policy, until ctx
// ends.
func (c *Cloud) keepPodPools(ctx context.Context, clientBuilder cloudprovider.ControllerClientBuilder) {
	client, err := clientBuilder.Client("example-cloud-controller-manager")
	if err != nil {
		klog.ErrorS(err, "cannot build a Kubernetes client; no pod pools: load balancers of target type ip wait")
		return
	}
	pools := podpools.New(client, c.engine, c.board, c.api, podpools.Options{
		Policy: annotations.ApplyPolicy(c.cfg.LoadBalancer.TargetPools.ApplyPolicy), ClusterID: c.cfg.ClusterID})
	c.podPools.Store(pools)
	c.lbs.KeepPodPools(pools)
	go func() {
		if err := pools.Run(ctx, podPoolWorkers); err != nil {
			klog.ErrorS(err, "Pod pools")
		}
	}()
}

// PodPools are the pod pools this replica keeps as the leader (nil before
// Initialize): the Gateway API front-end's too.
func (c *Cloud) PodPools() *podpools.Pools { return c.podPools.Load() }
