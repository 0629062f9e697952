package lbmodel

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
)

// The checks of a load balancer's listeners and of where it forwards,
// beyond its count of listeners and rules: what the cloud would refuse,
// named by the model's own fields (a front-end names the field of its
// object when it decides them: spec.ports[1].port, not listeners[0].port).

// checkListeners refuses a port out of range, two listeners on one port
// of a transport (tcp, http and https share the TCP ports), and a setting
// on a listener whose protocol has no use for it.
func checkListeners(ls []Listener) error {
	seen := map[string]bool{}
	for i, l := range ls {
		field := "listeners[" + strconv.Itoa(i) + "]"
		switch {
		case l.Port < 1 || l.Port > 65535:
			return &InputError{Field: field + ".port", Value: strconv.Itoa(l.Port), Reason: "is out of range 1-65535"}
		case l.TargetPort < 0 || l.TargetPort > 65535:
			return &InputError{Field: field + ".targetPort", Value: strconv.Itoa(l.TargetPort), Reason: "is out of range 1-65535"}
		case l.ProxyProtocol && l.Protocol != "tcp":
			return &InputError{Field: field + ".proxyProtocol", Reason: "is for tcp listeners only, not " + l.Protocol}
		case (len(l.Certificates) > 0 || len(l.CertificateIDs) > 0) && l.Protocol != "https":
			return &InputError{Field: field + ".certificates", Reason: "are for https listeners only, not " + l.Protocol}
		case l.HTTPSRedirectPort != 0 && l.Protocol != "http":
			return &InputError{Field: field + ".httpsRedirectPort", Value: strconv.Itoa(l.HTTPSRedirectPort), Reason: "is for http listeners only, not " + l.Protocol}
		case l.StickySessions != nil && l.Protocol != "http" && l.Protocol != "https":
			return &InputError{Field: field + ".stickySessions", Reason: "are for http and https listeners only, not " + l.Protocol}
		}
		key := l.PortKey()
		if seen[key] {
			return &InputError{Field: field + ".port", Value: strconv.Itoa(l.Port), Reason: "is used twice for " + transport(l.Protocol)}
		}
		seen[key] = true
	}
	return nil
}

// PortKey names the port a listener takes on the load balancer
// ("tcp/443"): tcp, http, https and tls listeners share the TCP ports.
func (l Listener) PortKey() string { return transport(l.Protocol) + "/" + strconv.Itoa(l.Port) }

// transport is the ports a listener of protocol takes: udp's, or TCP's.
func transport(protocol string) string {
	if protocol == "udp" {
		return "udp"
	}
	return "tcp"
}

// healthCheckProtocols are what the cloud probes with.
var healthCheckProtocols = []string{"tcp", "http", "https"}

// checkForwarding refuses a health check, source range, target or delay
// the cloud would not take.
func (lb LoadBalancer) checkForwarding() error {
	if h := lb.HealthCheck; h != nil {
		switch {
		case !slices.Contains(healthCheckProtocols, h.Protocol):
			return &InputError{Field: "healthCheck.protocol", Value: h.Protocol, Reason: "must be tcp, http or https"}
		case h.Port < 1 || h.Port > 65535:
			return &InputError{Field: "healthCheck.port", Value: strconv.Itoa(h.Port), Reason: "is out of range 1-65535"}
		case h.Path != "" && h.Protocol == "tcp":
			return &InputError{Field: "healthCheck.path", Value: h.Path, Reason: "is for http and https probes only"}
		}
	}
	for i, s := range lb.SourceCIDRs {
		if p, err := netip.ParsePrefix(s); err != nil || p.Masked().String() != s {
			return &InputError{Field: fmt.Sprintf("sourceCIDRs[%d]", i), Value: s, Reason: "is not a CIDR in canonical form"}
		}
	}
	if lb.TargetPoolID != "" && len(lb.Targets) > 0 {
		return &InputError{Field: "targets", Reason: "are listed while the load balancer forwards to target pool " + lb.TargetPoolID}
	}
	if lb.DeregistrationDelay != nil {
		return CheckDelay(lb.DeregistrationDelay.Duration)
	}
	return nil
}
