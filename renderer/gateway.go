package renderer

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// TagGatewayName names, on a Gateway's load balancer, the Gateway (its
// namespace is TagServiceNamespace's, its uid the owner tag
// TagServiceUID's).
const TagGatewayName = "k8s.example.com/gateway-name"

// Gateway is a Gateway API Gateway's load balancer as the gateway package
// decided it: its listeners, one per port and transport, and its
// HTTPRoutes' rules.
type Gateway struct {
	Namespace, Name, UID string
	Listeners            []GatewayListener
	Rules                []Rule
	// Certificates are the certificate chains (PEM) of the TLS Secrets
	// its HTTPS listeners serve, by "namespace/name" of the Secret (the
	// certificates module's keys; their private keys reach terraform as
	// a Service's do, never rendered).
	Certificates map[string]string
}

// GatewayListener is one cloud listener of a Gateway.
type GatewayListener struct {
	// Protocol is the cloud's: http, https, tls (passthrough), tcp or udp.
	Protocol string
	Port     int
	// TargetPort is where a tcp or udp listener forwards; an http(s)
	// listener's rules say where each request goes, and 0 takes its own
	// port (the cloud requires one, and no request reaches it: the load
	// balancer has no targets of its own).
	TargetPort int
	// Certificates are an https listener's: keys of Gateway.Certificates,
	// in the order the Gateway's listeners name them.
	Certificates []string
}

// Ref is the Gateway's identity.
func (g Gateway) Ref() objectref.Ref { return objectref.Gateway(g.Namespace, g.Name, g.UID) }

// GatewayName is the cloud name of a Gateway's load balancer: k8s- and 28
// hex digits of a hash of the cluster id and the Gateway's uid (its
// namespace/name without one), like a Service's but never equal to one.
func GatewayName(g Gateway, clusterID string) string {
	id := g.UID
	if id == "" {
		id = "name:" + g.Namespace + "/" + g.Name
	}
	sum := sha256.Sum256([]byte(clusterID + "\x00gateway\x00" + id))
	return "k8s-" + hex.EncodeToString(sum[:])[:28]
}

// RenderGateway renders the root module of a Gateway: one load balancer
// with its listeners and rules, forwarding only by its rules (it has no
// targets of its own). Like LoadBalancer it does no I/O, and identical
// inputs render byte-identical files.
func RenderGateway(g Gateway, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render %s", g.Ref().Describe())
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	switch {
	case len(g.Listeners) == 0:
		return nil, errors.New("no listener to serve")
	case len(g.Listeners) > exampleapi.MaxListeners:
		return nil, fmt.Errorf("%d listeners: the cloud takes at most %d", len(g.Listeners), exampleapi.MaxListeners)
	case len(g.Rules) > exampleapi.MaxRules:
		return nil, fmt.Errorf("%d rules (one per route rule, match and host name): the cloud takes at most %d", len(g.Rules), exampleapi.MaxRules)
	}
	s := lbSpec{
		name:      GatewayName(g, cfg.ClusterID),
		region:    cfg.Region,
		typ:       cfg.DefaultLoadBalancerType,
		ipFamily:  exampleapi.IPFamilyIPv4,
		algorithm: cfg.DefaultAlgorithm,
		tags:      ownerTags(cfg, g.Ref(), TagGatewayName),
	}
	ls := slices.Clone(g.Listeners)
	slices.SortFunc(ls, func(a, b GatewayListener) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
	})
	for _, l := range ls {
		for _, c := range l.Certificates {
			if g.Certificates[c] == "" {
				return nil, fmt.Errorf("listener %s:%d serves certificate %s, which has no certificate chain", l.Protocol, l.Port, c)
			}
		}
		s.listeners = append(s.listeners, listener{protocol: l.Protocol, port: l.Port, targetPort: cmp.Or(l.TargetPort, l.Port),
			certificates: slices.Clone(l.Certificates)})
	}
	s.certificates = g.Certificates
	who := g.Ref().Describe()
	if g.UID != "" {
		who += fmt.Sprintf(" (uid %s)", g.UID)
	}
	r, err := newModuleRoot(cfg, cfg.LoadBalancerModule, DefaultLoadBalancerModuleSource,
		heading{about: who, rewrite: "the Gateway, its routes or their Services change"})
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
