package renderer

import (
	"cmp"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// TagGatewayName names, on a Gateway's load balancer, the Gateway (its
// namespace is lbmodel.TagServiceNamespace's, its uid the owner tag
// lbmodel.TagServiceUID's).
const TagGatewayName = "k8s.example.com/gateway-name"

// GatewayName is the cloud name of a Gateway's load balancer: k8s- and 28
// hex digits of a hash of the cluster id and the Gateway's uid (its
// namespace/name without one), like a Service's but never equal to one.
func GatewayName(g lbmodel.LoadBalancer, clusterID string) string {
	return objectref.HashedName("k8s-", 28, clusterID, "gateway", g.Ref().HashSeed())
}

// RenderGateway renders the root module of a Gateway: one load balancer
// with its listeners and rules, forwarding only by its rules (it has no
// targets of its own). Like LoadBalancer it does no I/O, and identical
// inputs render byte-identical files.
func RenderGateway(g lbmodel.LoadBalancer, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render %s", g.Ref().Describe())
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	// What a Service decides of its load balancer, a Gateway's takes
	// from the config; its listeners without a target port take their
	// own.
	g.CloudName, g.Region, g.Type, g.IPFamily, g.Algorithm = GatewayName(g, cfg.ClusterID), cfg.Region, cfg.DefaultLoadBalancerType, exampleapi.IPFamilyIPv4, cfg.DefaultAlgorithm
	g.Tags = lbmodel.OwnerTags(cfg.ClusterID, g.Ref(), TagGatewayName)
	g.Listeners = g.SortedListeners()
	for i := range g.Listeners {
		g.Listeners[i].TargetPort = cmp.Or(g.Listeners[i].TargetPort, g.Listeners[i].Port)
	}
	r, err := ownLoadBalancerRoot(cfg, g.Ref().Describe(), g.UID, "the Gateway, its routes or their Services change")
	if err != nil {
		return nil, err
	}
	if err := r.loadBalancer(g, cfg, rulesInput(g.Rules)); err != nil {
		return nil, err
	}
	return newModule(r.bytes(), nil), nil
}
