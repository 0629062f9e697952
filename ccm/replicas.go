package ccm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	servicecontroller "k8s.io/cloud-provider/controllers/service"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/controller-manager/pkg/clientbuilder"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/shard"
)

// Sharded tells whether c runs the service controller on every replica
// (sharding.enabled): the leader's own is then off.
func (c *Cloud) Sharded() bool { return c.shards != nil }

// StartShards runs, on this replica, the Leases of its shards and a
// service controller over their Services (docs/adr/0017), until ctx ends.
// Every replica calls it before leader election; it does nothing unless
// sharding is enabled. workers is the service controller's concurrency
// (--concurrent-service-syncs).
func (c *Cloud) StartShards(ctx context.Context, kubeconfig *rest.Config, clusterName string, workers int) error {
	if c.shards == nil {
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
	sc := c.cfg.Sharding
	var holder *shard.Holder
	holder, err = shard.New(shard.Config{Client: client, Namespace: c.cfg.Review.Namespace, Prefix: shard.ControllerPrefix, Identity: id,
		Shards: sc.Shards, LeaseDuration: sc.LeaseDuration.Duration, Leads: c.shards.Leads,
		OnMove: func(i int, from, to string) {
			c.board.ShardMoved(holder.LeaseName(i), i, from, to)
			shardMoved(from == id)
		}})
	if err != nil {
		return err
	}
	c.shards.Hold(holder, c.engine.Forget, c.board.DropWarmRecords)
	c.board.SetReplica(id)
	c.startReplica(clientbuilder.SimpleControllerClientBuilder{ClientConfig: kubeconfig}, ctx.Done())

	factory := informers.NewSharedInformerFactory(client, 0)
	c.SetInformers(factory)
	services, err := c.lbs.ShardServices(factory.Core().V1().Services())
	if err != nil {
		return fmt.Errorf("shards: target pools: %w", err)
	}
	ctrl, err := servicecontroller.New(c, client, services, factory.Core().V1().Nodes(), clusterName, utilfeature.DefaultFeatureGate)
	if err != nil {
		return fmt.Errorf("shards: service controller: %w", err)
	}
	c.lbs.RunShards(ctx)
	factory.Start(ctx.Done())
	go holder.Run(ctx)
	go ctrl.Run(ctx, workers, controllersmetrics.NewControllerManagerMetrics("example-cloud-controller-manager"))
	klog.InfoS("Sharded: this replica runs the service controller over the Services of its shards",
		"replica", id, "shards", sc.Shards, "leaseDuration", sc.LeaseDuration.Duration, "namespace", c.cfg.Review.Namespace)
	return nil
}

// replicaIdentity names this replica among the live ones: its pod's name
// (the chart sets POD_NAME) or host name, and a random suffix, so a
// restarted replica is a new one and never takes a dead one's renewals
// for its own.
func replicaIdentity() (string, error) {
	name := os.Getenv("POD_NAME")
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("replica identity: %w", err)
		}
		name = h
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("replica identity: %w", err)
	}
	return name + "_" + hex.EncodeToString(b), nil
}
