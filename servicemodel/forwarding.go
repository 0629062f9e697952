package servicemodel

import (
	"cmp"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
)

// healthCheckFor starts from what the Service implies (kube-proxy's
// health check node port for externalTrafficPolicy Local, else the first
// TCP node port; to pods, tcp, each probed at its own port) and applies
// the annotations on top.
func healthCheckFor(svc *corev1.Service, ls []lbmodel.Listener, lbAnn annotations.LoadBalancer) (*lbmodel.HealthCheck, error) {
	ann := lbAnn.HealthCheck
	var hc lbmodel.HealthCheck
	var lowest int
	switch {
	case !lbAnn.Pods() && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && svc.Spec.HealthCheckNodePort > 0:
		hc = lbmodel.HealthCheck{Protocol: "http", Port: int(svc.Spec.HealthCheckNodePort), Path: annotations.DefaultHealthCheckPath}
	default:
		// The lowest TCP port (tcp, http and https listeners all are).
		for _, l := range ls {
			if l.Protocol != "udp" && (hc.Port == 0 || l.Port < lowest) {
				hc, lowest = lbmodel.HealthCheck{Protocol: "tcp", Port: l.TargetPort}, l.Port
			}
		}
	}
	if ann.Port != 0 {
		hc.Port = ann.Port
	}
	if ann.Protocol != "" {
		hc.Protocol = ann.Protocol
	}
	if hc.Port == 0 {
		if ann != (annotations.HealthCheck{}) {
			return nil, &lbmodel.InputError{Field: "annotation " + string(annotations.LBHealthCheckPort),
				Reason: "is required: the Service has no TCP port and no health check node port to probe"}
		}
		return nil, nil // UDP only: nothing to probe
	}
	hc.Protocol = cmp.Or(hc.Protocol, "tcp")
	hc.Path = ""
	if hc.Protocol == "http" || hc.Protocol == "https" {
		hc.Path = cmp.Or(ann.Path, annotations.DefaultHealthCheckPath)
	}
	hc.IntervalSeconds = int(cmp.Or(ann.Interval, annotations.DefaultHealthCheckInterval).Seconds())
	hc.TimeoutSeconds = int(cmp.Or(ann.Timeout, annotations.DefaultHealthCheckTimeout).Seconds())
	hc.HealthyThreshold = cmp.Or(ann.HealthyThreshold, annotations.DefaultHealthyThreshold)
	hc.UnhealthyThreshold = cmp.Or(ann.UnhealthyThreshold, annotations.DefaultUnhealthyThreshold)
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
