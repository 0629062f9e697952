package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	genericcontrollermanager "k8s.io/controller-manager/app"
	"k8s.io/controller-manager/controller"
	"k8s.io/klog/v2"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/ccm"
	"github.com/example/cloud-provider-example/gatewaycontroller"
	"github.com/example/cloud-provider-example/podpools"
	"github.com/example/cloud-provider-example/webhook"
)

// gatewayController names the Gateway API front-end among the controllers
// (--controllers).
const gatewayController = "gateway"

// startGateways runs the Gateway API front-end when the cloud config
// turns it on.
func (p *process) startGateways(ic app.ControllerInitContext, _ *config.CompletedConfig, _ cloudprovider.Interface) app.InitFunc {
	return func(ctx context.Context, cc genericcontrollermanager.ControllerContext) (controller.Interface, bool, error) {
		b, on := p.gatewayCloud()
		if !on {
			klog.V(2).InfoS("The Gateway API front-end is off (gatewayAPI.enabled)")
			return nil, false, nil
		}
		kube := cc.ClientBuilder.ClientOrDie(ic.ClientName)
		if pools := p.cloud.PodPools(); b.PodTargets && pools != nil {
			b.Pods = pools // the leader's (ccm: Initialize ran before)
		}
		c, err := newGatewayController(cc.ClientBuilder.ConfigOrDie(ic.ClientName), kube, b)
		if err != nil {
			return nil, false, err
		}
		// A release of a reserved address a Gateway names waits for it.
		p.cloud.Parts().LoadBalancers.Gateways().NamedBy(c)
		go c.Run(ctx)
		return nil, true, nil
	}
}

// awaitGateways tells the Services' load balancing that the Gateway API
// front-end runs here once this replica leads (the cloud config turns it
// on, and --controllers keeps it): a release of a reserved address then
// waits until it has read the Gateways, which may name the address.
func (p *process) awaitGateways(c *config.CompletedConfig) {
	parts := p.cloud.Parts()
	if parts.Config.GatewayAPI.Enabled &&
		genericcontrollermanager.IsControllerEnabled(gatewayController, app.ControllersDisabledByDefault, c.ComponentConfig.Generic.Controllers) {
		parts.LoadBalancers.Gateways().GatewaysComing()
	}
}

// gatewayPreviews previews Gateway API objects on every replica's
// webhook (nil when the front-end is off): a controller of its own that
// only watches, started with the webhook server.
func (p *process) gatewayPreviews(kubeconfig *rest.Config) ccm.GatewayPreview {
	b, on := p.gatewayCloud()
	if !on {
		return nil
	}
	return func(planAllowed func(string) bool) webhook.AdmitFunc {
		kube, err := kubernetes.NewForConfig(kubeconfig)
		if err == nil {
			var c *gatewaycontroller.Controller
			if c, err = newGatewayController(kubeconfig, kube, b); err == nil {
				c.Watch(context.Background()) // for the process's life
				return c.Preview(planAllowed)
			}
		}
		klog.ErrorS(err, "No preview of Gateway API objects")
		return nil
	}
}

// gatewayCloud is what the Gateway API front-end builds load balancers
// with: the engine, the review and the cloud config of the cloud
// provider, and the Services' load balancing's target pool of every node
// TLS Secrets and reserved addresses (package servicelb); false when the cloud config leaves
// the front-end off (gatewayAPI.enabled).
func (p *process) gatewayCloud() (*gatewaycontroller.Cloud, bool) {
	c := p.cloud.Parts()
	if !c.Config.GatewayAPI.Enabled {
		return nil, false
	}
	// What previews read of the pod pools (the leader's program replaces
	// it with the pools it keeps).
	infra := c.LoadBalancers.Gateways()
	return &gatewaycontroller.Cloud{Engine: c.Engine, Review: c.Board, Infra: infra, Addresses: infra,
		Pods: podpools.Recorded{Engine: c.Engine}, Settings: gatewaycontroller.SettingsOf(c.Config)}, true
}

// newGatewayController is a Gateway API front-end over cfg's API server,
// building load balancers with cloud.
func newGatewayController(cfg *rest.Config, kube kubernetes.Interface, cloud *gatewaycontroller.Cloud) (*gatewaycontroller.Controller, error) {
	// The controller manager's clients speak protobuf; custom resources
	// only JSON.
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("gateway controller: %w", err)
	}
	return gatewaycontroller.New(gw, kube, cloud)
}
