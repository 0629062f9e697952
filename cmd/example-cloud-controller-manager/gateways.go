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
	"github.com/example/cloud-provider-example/webhook"
)

// gatewayController names the Gateway API front-end among the controllers
// (--controllers).
const gatewayController = "gateway"

// startGateways runs the Gateway API front-end when the cloud config
// turns it on.
func startGateways(ic app.ControllerInitContext, _ *config.CompletedConfig, cloud cloudprovider.Interface) app.InitFunc {
	return func(ctx context.Context, cc genericcontrollermanager.ControllerContext) (controller.Interface, bool, error) {
		b, on := ccm.Gateways(cloud)
		if !on {
			klog.V(2).InfoS("The Gateway API front-end is off (gatewayAPI.enabled)")
			return nil, false, nil
		}
		c, err := newGatewayController(cc.ClientBuilder.ConfigOrDie(ic.ClientName), cc.ClientBuilder.ClientOrDie(ic.ClientName), b)
		if err != nil {
			return nil, false, err
		}
		go c.Run(ctx)
		return nil, true, nil
	}
}

// gatewayPreviews previews Gateway API objects on every replica's
// webhook (nil when the front-end is off): a controller of its own that
// only watches, started with the webhook server.
func gatewayPreviews(cloud cloudprovider.Interface, kubeconfig *rest.Config) ccm.GatewayPreview {
	b, on := ccm.Gateways(cloud)
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

// newGatewayController is a Gateway API front-end over cfg's API server,
// building load balancers with b.
func newGatewayController(cfg *rest.Config, kube kubernetes.Interface, b *ccm.GatewayBackend) (*gatewaycontroller.Controller, error) {
	// The controller manager's clients speak protobuf; custom resources
	// only JSON.
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("gateway controller: %w", err)
	}
	return gatewaycontroller.New(gw, kube, &gatewaycontroller.Cloud{Engine: b.Engine, Review: b.Board, Infra: b, Settings: gatewaycontroller.SettingsOf(b.Config)})
}
