package servicemodel

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/example/cloud-provider-example/annotations"
)

// Shape is what a reviewer reads of a Service's load balancer, from the
// same inputs the rendering takes: compared between two versions of a
// Service, it says what an edit changes without running terraform (the
// preview's fallback).
type Shape struct {
	Name, Type, Algorithm string
	// Internal and IPFamily replace the load balancer when they change.
	Internal  bool
	IPFamily  string
	Listeners []ListenerShape
	// SourceCIDRs are the addresses allowed in (empty: anyone).
	SourceCIDRs []string
}

// ListenerShape is one listener, named by protocol and port.
type ListenerShape struct {
	Protocol     string
	Port         int
	TargetPort   int
	Proxy        bool
	Certificates []string
	RedirectPort int
	// Pods: it forwards to the Service port's pods (target type ip).
	Pods bool
}

// String names the listener as a reviewer does: "https/443".
func (l ListenerShape) String() string { return l.Protocol + "/" + strconv.Itoa(l.Port) }

// Describe is the listener's settings, for "changed" lines.
func (l ListenerShape) Describe() string {
	parts := []string{"to node port " + strconv.Itoa(l.TargetPort)}
	if l.Pods {
		parts[0] = "to the pods"
	}
	if l.Proxy {
		parts = append(parts, "proxy protocol")
	}
	if len(l.Certificates) > 0 {
		parts = append(parts, "certificates "+strings.Join(l.Certificates, ", "))
	}
	if l.RedirectPort != 0 {
		parts = append(parts, fmt.Sprintf("redirects to %d", l.RedirectPort))
	}
	return strings.Join(parts, ", ")
}

// LoadBalancerShape is the shape of in's load balancer under cfg, from
// what Translate reads but the nodes and certificates; an error is the
// translation's own refusal.
func LoadBalancerShape(in *annotations.Service, cfg Config) (Shape, error) {
	svc := in.Service
	if err := checkType(svc); err != nil {
		return Shape{}, err
	}
	ann := in.LB
	if in.Err != nil {
		return Shape{}, in.Err
	}
	ls, err := listeners(svc, ann)
	if err != nil {
		return Shape{}, err
	}
	cidrs, _, err := sourceCIDRs(svc, ann)
	if err != nil {
		return Shape{}, err
	}
	out := Shape{Name: CloudName(svc, ann, cfg.ClusterID), Type: cmp.Or(ann.Type, cfg.DefaultType, annotations.DefaultType),
		Algorithm: cmp.Or(ann.Algorithm, cfg.DefaultAlgorithm, annotations.DefaultAlgorithm), Internal: ann.Internal, IPFamily: ipFamily(svc), SourceCIDRs: cidrs}
	for _, l := range ls {
		out.Listeners = append(out.Listeners, ListenerShape{Protocol: l.Protocol, Port: l.Port, TargetPort: l.TargetPort, Proxy: l.ProxyProtocol,
			Certificates: slices.Clone(l.Certificates), RedirectPort: l.HTTPSRedirectPort, Pods: ann.Pods()})
	}
	return out, nil
}
