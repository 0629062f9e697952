package ccm

import (
	"context"
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cloudprovider "k8s.io/cloud-provider"
	servicecontroller "k8s.io/cloud-provider/controllers/service"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/shard"
)

// Sharded tells whether c runs the service controller on every replica
// (sharding.enabled): the leader's own is then off.
func Sharded(c cloudprovider.Interface) bool {
	cl, ok := c.(*cloud)
	return ok && cl.shards != nil
}

// StartShards runs, on this replica, the Leases of its shards and a
// service controller over their Services (docs/adr/0017), until ctx ends.
// Every replica calls it before leader election; it does nothing unless
// sharding is enabled. workers is the service controller's concurrency
// (--concurrent-service-syncs).
func StartShards(ctx context.Context, c cloudprovider.Interface, kubeconfig *rest.Config, clusterName string, workers int) error {
	cl, ok := c.(*cloud)
	if !ok || cl.shards == nil {
		return nil
	}
	id, err := replicaIdentity()
	if err != nil {
		return err
	}
	cfg := rest.CopyConfig(kubeconfig)
	cfg.UserAgent = "example-service-controller"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("shards: kubernetes client: %w", err)
	}
	sc := cl.cfg.Sharding
	var holder *shard.Holder
	holder, err = shard.New(shard.Config{Client: client, Namespace: cl.cfg.Review.Namespace, Prefix: shardPrefix, Identity: id,
		Shards: sc.Shards, LeaseDuration: sc.LeaseDuration.Duration, Leads: cl.shards.leader.Load,
		OnMove: func(i int, from, to string) {
			cl.board.ShardMoved(holder.LeaseName(i), i, from, to)
			shardMoved(from == id)
		}})
	if err != nil {
		return err
	}
	cl.shards.current.Store(holder)
	cl.shards.forget, cl.shards.taken = cl.engine.Forget, cl.board.DropWarmRecords
	cl.board.SetReplica(id)
	cl.startReplica(clientbuilder.SimpleControllerClientBuilder{ClientConfig: kubeconfig}, ctx.Done())

	factory := informers.NewSharedInformerFactory(client, 0)
	cl.SetInformers(factory)
	services := factory.Core().V1().Services()
	cl.shards.services = services.Informer().GetIndexer()
	ctrl, err := servicecontroller.New(cl, client, shardedServices{ServiceInformer: services, shards: cl.shards},
		factory.Core().V1().Nodes(), clusterName, utilfeature.DefaultFeatureGate)
	if err != nil {
		return fmt.Errorf("shards: service controller: %w", err)
	}
	if cl.shards.pools, err = newPoolCreator(cl.lb, services.Informer()); err != nil {
		return fmt.Errorf("shards: target pools: %w", err)
	}
	go cl.shards.pools.run(ctx)
	factory.Start(ctx.Done())
	go holder.Run(ctx)
	go cl.shards.watchHeld(ctx)
	go ctrl.Run(ctx, workers, controllersmetrics.NewControllerManagerMetrics("example-cloud-controller-manager"))
	klog.InfoS("Sharded: this replica runs the service controller over the Services of its shards",
		"replica", id, "shards", sc.Shards, "leaseDuration", sc.LeaseDuration.Duration, "namespace", cl.cfg.Review.Namespace)
	return nil
}
