// Command example-cloud-controller-manager runs the Kubernetes cloud
// controllers (cloud-node, cloud-node-lifecycle, service, route) for the
// Example cloud, with leader election, from k8s.io/cloud-provider's app.
// With sharding (docs/adr/0017) the service controller runs on every
// replica, over the Services of the shards it holds, and the leader's own
// is off. With gatewayAPI.enabled the leader also runs the Gateway API
// front-end (controller gateway, docs/gateway-api.md).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/util/wait"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/controller"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/ccm"
)

// process is what the controller's process opened: the cloud provider,
// held as it is, so that the controllers started beside k8s.io's (the
// Gateway API front-end, the shards, the webhooks) are wired to its parts
// without a cloudprovider.Interface to downcast.
type process struct {
	cloud *ccm.Cloud
}

func main() {
	p := &process{}
	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		klog.Fatalf("unable to initialize command options: %v", err)
	}
	opts.KubeCloudShared.CloudProvider.Name = ccm.ProviderName
	cmd := app.NewCloudControllerManagerCommand(opts, p.cloudInitializer, p.controllerInitializers(), names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	cmd.Use = "example-cloud-controller-manager"
	os.Exit(cli.Run(cmd))
}

// controllerInitializers names each controller's client after this CCM, so
// API audit logs and RBAC show who did what.
func (p *process) controllerInitializers() map[string]app.ControllerInitFuncConstructor {
	inits := app.DefaultInitFuncConstructors
	for name, client := range map[string]string{
		names.CloudNodeController:          "example-cloud-node-controller",
		names.CloudNodeLifecycleController: "example-cloud-node-lifecycle-controller",
		names.ServiceLBController:          "example-service-controller",
		names.NodeRouteController:          "example-route-controller",
	} {
		if c, ok := inits[name]; ok {
			c.InitContext.ClientName = client
			inits[name] = c
		}
	}
	if c, ok := inits[names.ServiceLBController]; ok {
		start := c.Constructor
		c.Constructor = func(ic app.ControllerInitContext, cc *config.CompletedConfig, cloud cloudprovider.Interface) app.InitFunc {
			if p.cloud.Sharded() {
				return func(context.Context, genericcontrollermanager.ControllerContext) (controller.Interface, bool, error) {
					klog.InfoS("The leader's service controller is off: every replica runs one over its shards")
					return nil, false, nil
				}
			}
			return start(ic, cc, cloud)
		}
		inits[names.ServiceLBController] = c
	}
	inits[gatewayController] = app.ControllerInitFuncConstructor{
		InitContext: app.ControllerInitContext{ClientName: "example-gateway-controller"},
		Constructor: p.startGateways,
	}
	return inits
}

func (p *process) cloudInitializer(c *config.CompletedConfig) cloudprovider.Interface {
	cfg := c.ComponentConfig.KubeCloudShared.CloudProvider
	if cfg.Name != ccm.ProviderName {
		klog.Fatalf("cloud provider %q is unknown (this binary knows %q)", cfg.Name, ccm.ProviderName)
	}
	cloud, err := ccm.Open(cfg.CloudConfigFile)
	if err != nil {
		klog.Fatalf("cloud provider %q could not be initialized: %v", cfg.Name, err)
	}
	if !cloud.HasClusterID() {
		klog.Fatal("no clusterID in the cloud config: it names cloud objects and state, and is required")
	}
	p.cloud = cloud
	p.awaitGateways(c)
	// Every replica serves the admission webhooks, leader or not: this
	// runs before leader election.
	if err := cloud.StartWebhooks(context.Background(), c.Kubeconfig, p.gatewayPreviews(c.Kubeconfig)); err != nil {
		klog.Fatalf("admission webhooks: %v", err)
	}
	// So does the service controller of a sharded controller; on SIGTERM
	// it gives its shards back at once rather than after their lease.
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt) // for the process's life: never stopped
	if err := cloud.StartShards(ctx, c.Kubeconfig, c.ComponentConfig.KubeCloudShared.ClusterName,
		int(c.ComponentConfig.ServiceController.ConcurrentServiceSyncs)); err != nil {
		klog.Fatalf("shards: %v", err)
	}
	return cloud
}
