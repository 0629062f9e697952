package renderer

import (
	"cmp"
	"maps"
	"slices"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// TagGatewayName names, on a Gateway's load balancer, the Gateway (its
// namespace is TagServiceNamespace's, its uid the owner tag
// TagServiceUID's).
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
	s := lbSpec{
		name:      GatewayName(g, cfg.ClusterID),
		region:    cfg.Region,
		typ:       cfg.DefaultLoadBalancerType,
		ipFamily:  exampleapi.IPFamilyIPv4,
		algorithm: cfg.DefaultAlgorithm,
		tags:      ownerTags(cfg, g.Ref(), TagGatewayName),
	}
	for _, l := range g.SortedListeners() {
		s.listeners = append(s.listeners, listener{protocol: l.Protocol, port: l.Port, targetPort: cmp.Or(l.TargetPort, l.Port),
			certificates: slices.Clone(l.Certificates)})
	}
	s.certificates = g.Certificates
	r, err := ownLoadBalancerRoot(cfg, g.Ref().Describe(), g.UID, "the Gateway, its routes or their Services change")
	if err != nil {
		return nil, err
	}
	if len(s.certificates) > 0 {
		r.tlsKeys(slices.Sorted(maps.Keys(s.certificates)))
		if err := r.moduleCall(CertificatesModuleName, cfg.CertificatesModule, certificatesInputs(s.certificates, s.region, s.tags)); err != nil {
			return nil, err
		}
	}
	in := s.inputs()
	if len(g.Rules) > 0 {
		i := slices.IndexFunc(in, func(i input) bool { return i.name == "listeners" }) + 1
		in = slices.Insert(in, i, input{name: "rules", value: rulesValue(g.Rules)})
	}
	if err := r.moduleCall(LoadBalancerModuleName, cfg.LoadBalancerModule, in); err != nil {
		return nil, err
	}
	r.outputs(LoadBalancerModuleName, loadBalancerOutputs)
	return newModule(r.bytes(), nil), nil
}
