package gatewaycontroller

import (
	"context"
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Where a Gateway's rules forward: a backend Service port's pods through
// its pod pool (gatewayAPI.targetType ip, the default), or its node port
// on the target pool of every node.

// resolvePools gives every backend of lb its target pool: each Service
// port's pod pool (made when new, under the pools' review), the pool of
// every node for node ports. It says which failed.
func (c *Controller) resolvePools(ctx context.Context, gw *gatewayv1.Gateway, lb *gateway.LoadBalancer) (string, error) {
	ports := lb.PodPorts()
	var pods map[lbmodel.ServicePort]string
	if c.cloud.PodTargets && c.cloud.Pods != nil {
		var err error
		user := objectref.Gateway(gw.Namespace, gw.Name, "").Key()
		if pods, err = c.cloud.Pods.Use(ctx, user, ports); err != nil {
			return "pod pools", err
		}
	}
	var node string
	if !c.cloud.PodTargets {
		// Node targets: the pool of every node is made with the Gateway,
		// before any route needs it.
		var err error
		if node, err = c.pool(ctx, gw); err != nil {
			return "target pool of every node", err
		}
	}
	if len(ports) > 0 {
		if err := lb.SetPodPools(pods); err != nil {
			return "pod pools", err
		}
	}
	for i := range lb.Rules {
		for j := range lb.Rules[i].Backends {
			b := &lb.Rules[i].Backends[j]
			if b.Pods != nil {
				continue
			}
			if node == "" {
				var err error
				if node, err = c.pool(ctx, gw); err != nil {
					return "target pool of every node", err
				}
			}
			b.TargetPoolID = node
		}
	}
	return "", nil
}

// previewPools is resolvePools for a preview, which makes nothing: "" when
// a pool lb needs does not exist yet, with why.
func (c *Controller) previewPools(ctx context.Context, lb *gateway.LoadBalancer) (string, error) {
	var known map[lbmodel.ServicePort]string
	if ports := lb.PodPorts(); len(ports) > 0 && c.cloud.Pods != nil {
		var err error
		if known, err = c.cloud.Pods.Known(ctx, ports); err != nil {
			return "", fmt.Errorf("pod pools: %w", err)
		}
	}
	var node string
	for i := range lb.Rules {
		for j := range lb.Rules[i].Backends {
			b := &lb.Rules[i].Backends[j]
			if b.Pods != nil {
				if b.TargetPoolID = known[*b.Pods]; b.TargetPoolID == "" {
					return fmt.Sprintf("the pod pool of %s does not exist yet (the Gateway's first plan that forwards to it creates it)", b.Pods), nil
				}
				continue
			}
			if node == "" {
				id, err := c.cloud.Infra.ExistingPool(ctx)
				switch {
				case err != nil:
					return "", fmt.Errorf("target pool of every node: %w", err)
				case id == "":
					return "the target pool of every node does not exist yet (the controller creates it with the first plan of a Service, or of a Gateway under the auto policy, that needs it)", nil
				}
				node = id
			}
			b.TargetPoolID = node
		}
	}
	return "", nil
}
