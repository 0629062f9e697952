package renderer

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Tag keys the controller puts on every load balancer.
const (
	TagManagedBy        = "k8s.example.com/managed-by"
	TagClusterID        = exampleapi.TagClusterID
	TagServiceNamespace = exampleapi.TagNamespace
	TagServiceName      = exampleapi.TagServiceName
	TagServiceUID       = exampleapi.TagServiceUID
)

// OwnerTagKeys are the tags that name a load balancer's owner: another
// value for one of them means another cluster's or Service's.
var OwnerTagKeys = []string{TagClusterID, TagServiceUID}

// OwnerTags are the owner tags svc's load balancer carries.
func OwnerTags(svc *corev1.Service, clusterID string) map[string]string {
	return map[string]string{TagClusterID: clusterID, TagServiceUID: objectref.Service(svc).OwnerTag()}
}

// CheckService refuses a Service its load balancer cannot be rendered for
// (ports, protocols, annotations), before anything else is done for it;
// rendering checks the same.
func CheckService(in *annotations.Service, cfg Config) error {
	svc := in.Service
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return &lbmodel.InputError{Field: "spec.type", Value: string(svc.Spec.Type), Reason: "is not LoadBalancer"}
	}
	if in.Err != nil {
		return in.Err
	}
	if limit := cmp.Or(cfg.MaxListeners, MaxListeners); len(svc.Spec.Ports) > limit {
		return &TooManyListenersError{Ports: len(svc.Spec.Ports), Limit: limit}
	}
	_, err := listeners(svc, in.LB)
	return err
}

// lbSpec is the load balancer module's input, before it becomes HCL.
type lbSpec struct {
	name, region, typ   string
	internal            bool
	ipFamily, algorithm string
	listeners           []listener
	healthCheck         *healthCheck
	sourceCIDRs         []string
	targets             []string
	targetPoolID        string
	tags                map[string]string
	// certificates are the TLS Secrets' certificates by Secret name (the
	// certificates module's input); empty without TLS Secrets.
	certificates map[string]string
}

type listener struct {
	protocol         string
	port, targetPort int
	proxyProtocol    bool
	// https: certificates (keys of the certificates module's, i.e. TLS
	// Secret names) and certificate ids, in the annotations' order.
	certificates, certificateIDs []string
	redirectPort                 int // http: redirect to this https port
	sticky                       *stickySessions
	servicePortFields            string // for error messages
}

type healthCheck struct {
	protocol, path                              string
	port, interval, timeout, healthy, unhealthy int
}

// ownerTags are the tags of a load balancer made for ref (a Service or a
// Gateway): this generator and cluster, ref's namespace, its name under
// nameTag, and its owner tag when it has a uid.
func ownerTags(cfg Config, ref objectref.Ref, nameTag string) map[string]string {
	tags := map[string]string{
		TagManagedBy:        generator,
		TagClusterID:        cfg.ClusterID,
		TagServiceNamespace: ref.Namespace,
		nameTag:             ref.Name,
	}
	if ref.UID != "" {
		tags[TagServiceUID] = ref.OwnerTag()
	}
	return tags
}

func loadBalancerSpec(svc *corev1.Service, nodes []*corev1.Node, ann annotations.LoadBalancer, cfg Config) (lbSpec, []string, error) {
	s := lbSpec{
		name:      CloudName(svc, ann, cfg.ClusterID),
		region:    cfg.Region,
		typ:       cmp.Or(ann.Type, cfg.DefaultLoadBalancerType),
		internal:  ann.Internal,
		algorithm: cmp.Or(ann.Algorithm, cfg.DefaultAlgorithm),
		tags:      ownerTags(cfg, objectref.Service(svc), TagServiceName),
	}
	var warnings []string
	var err error
	if limit := cmp.Or(cfg.MaxListeners, MaxListeners); len(svc.Spec.Ports) > limit {
		return s, nil, &TooManyListenersError{Ports: len(svc.Spec.Ports), Limit: limit}
	}
	if cfg.SkipTLSSecrets {
		ann = withoutTLSSecrets(ann)
	}
	if s.listeners, err = listeners(svc, ann); err != nil {
		return s, nil, err
	}
	if len(ann.TLSSecrets) > 0 {
		if s.certificates, err = certificatesFor(svc, ann.TLSSecrets, cfg); err != nil {
			return s, nil, err
		}
	}
	if s.healthCheck, err = healthCheckFor(svc, s.listeners, ann.HealthCheck); err != nil {
		return s, nil, err
	}
	var w []string
	if s.sourceCIDRs, w, err = sourceCIDRs(svc, ann); err != nil {
		return s, nil, err
	}
	warnings = append(warnings, w...)

	s.ipFamily = ipFamily(svc)
	if fs := svc.Spec.IPFamilies; slices.Contains(fs, corev1.IPv6Protocol) && !slices.Contains(fs, corev1.IPv4Protocol) {
		warnings = append(warnings, "spec.ipFamilies is IPv6 only: the load balancer is dualstack (it has no IPv6-only mode) and also gets an IPv4 address")
	}

	if cfg.TargetPoolID != "" {
		s.targetPoolID = cfg.TargetPoolID // the pool holds the nodes
		return s, warnings, nil
	}
	s.targets, w = targets(nodes, ann.NodeSelector, cfg.Region)
	warnings = append(warnings, w...)
	return s, warnings, nil
}

// ipFamily is the load balancer's: dualstack for any IPv6 family (the
// cloud has no IPv6-only mode), else ipv4.
func ipFamily(svc *corev1.Service) string {
	if slices.Contains(svc.Spec.IPFamilies, corev1.IPv6Protocol) {
		return "dualstack"
	}
	return "ipv4"
}

func listeners(svc *corev1.Service, ann annotations.LoadBalancer) ([]listener, error) {
	proxy := ann.ProxyProtocol
	if len(svc.Spec.Ports) == 0 {
		return nil, &lbmodel.InputError{Field: "spec.ports", Reason: "is empty: a load balancer needs at least one port"}
	}
	var out []listener
	for i, p := range svc.Spec.Ports {
		field := fmt.Sprintf("spec.ports[%d]", i)
		var proto string
		switch p.Protocol {
		case corev1.ProtocolTCP, "": // the API server defaults "" to TCP
			proto = "tcp"
		case corev1.ProtocolUDP:
			proto = "udp"
		default:
			return nil, &UnsupportedProtocolError{Port: p.Name, Number: p.Port, Protocol: p.Protocol}
		}
		if p.Port < 1 || p.Port > 65535 {
			return nil, &lbmodel.InputError{Field: field + ".port", Value: fmt.Sprint(p.Port), Reason: "is out of range 1-65535"}
		}
		if p.NodePort < 1 || p.NodePort > 65535 {
			return nil, &lbmodel.InputError{Field: field + ".nodePort", Value: fmt.Sprint(p.NodePort),
				Reason: "is not allocated: the load balancer forwards to node ports (is spec.allocateLoadBalancerNodePorts false?)"}
		}
		out = append(out, listener{
			protocol: proto, port: int(p.Port), targetPort: int(p.NodePort),
			proxyProtocol: proxy && proto == "tcp", servicePortFields: field,
		})
	}
	slices.SortFunc(out, func(a, b listener) int {
		return cmp.Or(strings.Compare(a.protocol, b.protocol), a.port-b.port, a.targetPort-b.targetPort)
	})
	for i := 1; i < len(out); i++ {
		if out[i].protocol == out[i-1].protocol && out[i].port == out[i-1].port {
			return nil, &lbmodel.InputError{Field: out[i].servicePortFields + ".port", Value: fmt.Sprint(out[i].port),
				Reason: fmt.Sprintf("is used twice for %s (also %s)", out[i].protocol, out[i-1].servicePortFields)}
		}
	}
	if err := tlsPorts(out, ann); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b listener) int {
		return cmp.Or(strings.Compare(a.protocol, b.protocol), a.port-b.port, a.targetPort-b.targetPort)
	})
	return out, nil
}

// healthCheckFor starts from what the Service implies (kube-proxy's
// health check node port for externalTrafficPolicy Local, else the first
// TCP node port) and applies the annotations on top.
func healthCheckFor(svc *corev1.Service, ls []listener, ann annotations.HealthCheck) (*healthCheck, error) {
	var hc healthCheck
	var lowest int
	switch {
	case svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && svc.Spec.HealthCheckNodePort > 0:
		hc = healthCheck{protocol: "http", port: int(svc.Spec.HealthCheckNodePort), path: annotations.DefaultHealthCheckPath}
	default:
		// The lowest TCP port (tcp, http and https listeners all are).
		for _, l := range ls {
			if l.protocol != "udp" && (hc.port == 0 || l.port < lowest) {
				hc, lowest = healthCheck{protocol: "tcp", port: l.targetPort}, l.port
			}
		}
	}
	if ann.Port != 0 {
		hc.port = ann.Port
	}
	if ann.Protocol != "" {
		hc.protocol = ann.Protocol
	}
	if hc.port == 0 {
		if ann != (annotations.HealthCheck{}) {
			return nil, &lbmodel.InputError{Field: "annotation " + string(annotations.LBHealthCheckPort),
				Reason: "is required: the Service has no TCP port and no health check node port to probe"}
		}
		return nil, nil // UDP only: nothing to probe
	}
	hc.protocol = cmp.Or(hc.protocol, "tcp")
	hc.path = ""
	if hc.protocol == "http" || hc.protocol == "https" {
		hc.path = cmp.Or(ann.Path, annotations.DefaultHealthCheckPath)
	}
	hc.interval = int(cmp.Or(ann.Interval, annotations.DefaultHealthCheckInterval).Seconds())
	hc.timeout = int(cmp.Or(ann.Timeout, annotations.DefaultHealthCheckTimeout).Seconds())
	hc.healthy = cmp.Or(ann.HealthyThreshold, annotations.DefaultHealthyThreshold)
	hc.unhealthy = cmp.Or(ann.UnhealthyThreshold, annotations.DefaultUnhealthyThreshold)
	return &hc, nil
}

// sourceCIDRs: spec.loadBalancerSourceRanges, else the legacy annotation
// (Kubernetes' own precedence). Host bits are masked: the API accepts
// canonical CIDRs only, and the masked range is what a firewall would use.
func sourceCIDRs(svc *corev1.Service, ann annotations.LoadBalancer) ([]string, []string, error) {
	var warnings []string
	prefixes := ann.SourceRanges
	for _, s := range ann.HostBitsFixed {
		warnings = append(warnings, fmt.Sprintf("annotation %s: %s has host bits set; using %s",
			annotations.LegacySourceRanges, s, netip.MustParsePrefix(s).Masked()))
	}
	if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
		prefixes, warnings = nil, nil
		seen := map[netip.Prefix]bool{}
		for i, s := range svc.Spec.LoadBalancerSourceRanges {
			p, err := netip.ParsePrefix(strings.TrimSpace(s))
			if err != nil || p.Addr().Is4In6() || p.Addr().Zone() != "" {
				return nil, nil, &lbmodel.InputError{Field: fmt.Sprintf("spec.loadBalancerSourceRanges[%d]", i), Value: s, Reason: "is not a CIDR"}
			}
			if m := p.Masked(); m != p {
				warnings = append(warnings, fmt.Sprintf("spec.loadBalancerSourceRanges[%d]: %s has host bits set; using %s", i, s, m))
				p = m
			}
			if !seen[p] {
				seen[p] = true
				prefixes = append(prefixes, p)
			}
		}
		prefixes = annotations.SortPrefixes(prefixes)
	}
	out := make([]string, len(prefixes))
	for i, p := range prefixes {
		out[i] = p.String()
	}
	return out, warnings, nil
}

// inputs are the module arguments in the order a reviewer reads them.
func (s lbSpec) inputs() []input {
	ls := make([]cty.Value, len(s.listeners))
	for i, l := range s.listeners {
		ls[i] = l.value()
	}
	hc := cty.NullVal(cty.DynamicPseudoType)
	if h := s.healthCheck; h != nil {
		attrs := map[string]cty.Value{
			"protocol":            cty.StringVal(h.protocol),
			"port":                cty.NumberIntVal(int64(h.port)),
			"interval_seconds":    cty.NumberIntVal(int64(h.interval)),
			"timeout_seconds":     cty.NumberIntVal(int64(h.timeout)),
			"healthy_threshold":   cty.NumberIntVal(int64(h.healthy)),
			"unhealthy_threshold": cty.NumberIntVal(int64(h.unhealthy)),
		}
		if h.path != "" {
			attrs["path"] = cty.StringVal(h.path)
		}
		hc = cty.ObjectVal(attrs)
	}
	in := []input{
		{name: "name", value: cty.StringVal(s.name)},
		{name: "region", value: cty.StringVal(s.region)},
		{name: "type", value: cty.StringVal(s.typ)},
		{name: "internal", value: cty.BoolVal(s.internal)},
		{name: "ip_family", value: cty.StringVal(s.ipFamily)},
		{name: "algorithm", value: cty.StringVal(s.algorithm)},
		{name: "listeners", value: cty.TupleVal(ls)}, // tuple: http(s) listeners have more attributes
		{name: "health_check", value: hc},
		{name: "allowed_source_cidrs", value: stringList(s.sourceCIDRs)},
		{name: "targets", value: stringList(s.targets)},
		{name: "tags", value: stringMap(s.tags)},
	}
	if s.targetPoolID != "" {
		in = append(in, input{name: "target_pool_id", value: cty.StringVal(s.targetPoolID)})
	}
	if len(s.certificates) > 0 {
		in = slices.Insert(in, slices.IndexFunc(in, func(i input) bool { return i.name == "listeners" })+1, certificateIDsInput())
	}
	return in
}

// value is the listener as the module takes it; the http(s) attributes
// only when set, so tcp and udp listeners read as before.
func (l listener) value() cty.Value {
	attrs := map[string]cty.Value{
		"protocol":       cty.StringVal(l.protocol),
		"port":           cty.NumberIntVal(int64(l.port)),
		"target_port":    cty.NumberIntVal(int64(l.targetPort)),
		"proxy_protocol": cty.BoolVal(l.proxyProtocol),
	}
	if len(l.certificates) > 0 {
		attrs["certificates"] = stringList(l.certificates)
	}
	if len(l.certificateIDs) > 0 {
		attrs["certificate_ids"] = stringList(l.certificateIDs)
	}
	if l.redirectPort != 0 {
		attrs["redirect_to_https_port"] = cty.NumberIntVal(int64(l.redirectPort))
	}
	if l.sticky != nil {
		attrs["sticky_sessions"] = cty.ObjectVal(map[string]cty.Value{
			"cookie_name": cty.StringVal(l.sticky.cookieName),
			"ttl_seconds": cty.NumberIntVal(int64(l.sticky.ttlSeconds)),
		})
	}
	return cty.ObjectVal(attrs)
}

func stringList(ss []string) cty.Value {
	if len(ss) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vs := make([]cty.Value, len(ss))
	for i, s := range ss {
		vs[i] = cty.StringVal(s)
	}
	return cty.ListVal(vs)
}

func stringMap(m map[string]string) cty.Value {
	if len(m) == 0 {
		return cty.MapValEmpty(cty.String)
	}
	vs := make(map[string]cty.Value, len(m))
	for k, v := range m {
		vs[k] = cty.StringVal(v)
	}
	return cty.MapVal(vs)
}

func ctyString(s string) cty.Value { return cty.StringVal(s) }
