package simulator

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Stateless request validation. Every failure is a 400 naming the offending
// field and, for enumerations, the accepted values. Checks that need the
// store (zones, regions, instances exist) live with the operations.

const (
	maxTags        = exampleapi.MaxTags
	maxTagKeyLen   = 128
	maxTagValueLen = 256
	maxNameLen     = 253
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func validateName(field, name string) error {
	switch {
	case name == "":
		return invalid(field, "is required")
	case len(name) > maxNameLen:
		return invalid(field, "is longer than %d characters", maxNameLen)
	case !nameRE.MatchString(name):
		return invalid(field, "%q is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit)", name)
	}
	return nil
}

// validateNameRegion checks the name and region an object of a region is
// created with; that the region exists is checked with the store.
func validateNameRegion(name, region string) error {
	if err := validateName("name", name); err != nil {
		return err
	}
	if region == "" {
		return invalid("region", "is required")
	}
	return nil
}

// oneOf checks value against accepted; what names the kind of value in the
// message, e.g. `unknown protocol "sctp" (accepted: tcp, udp)`.
func oneOf(field, what, value string, accepted []string) error {
	if slices.Contains(accepted, value) {
		return nil
	}
	list := strings.Join(accepted, ", ")
	if value == "" {
		return invalid(field, "is required (accepted: %s)", list)
	}
	return invalid(field, "unknown %s %q (accepted: %s)", what, value, list)
}

func validateRange(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return invalid(field, "%d is out of range (accepted: %d-%d)", v, lo, hi)
	}
	return nil
}

func validateTags(field string, tags map[string]string) error {
	if len(tags) > maxTags {
		return invalid(field, "has %d tags (at most %d)", len(tags), maxTags)
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		switch {
		case k == "":
			return invalid(field, "tag keys must not be empty")
		case len(k) > maxTagKeyLen:
			return invalid(field, "tag key %q is longer than %d characters", k, maxTagKeyLen)
		case strings.ContainsFunc(k, unicode.IsControl) || strings.Contains(k, "="):
			return invalid(field, "tag key %q must not contain '=' or control characters", k)
		case len(tags[k]) > maxTagValueLen:
			return invalid(field, "value of tag %q is longer than %d characters", k, maxTagValueLen)
		case strings.ContainsFunc(tags[k], unicode.IsControl):
			return invalid(field, "value of tag %q must not contain control characters", k)
		}
	}
	return nil
}

// parseAddr parses an IPv4 (want4) or IPv6 address.
func parseAddr(field, s string, want4 bool) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, invalid(field, "%q is not a valid IP address", s)
	}
	if want4 && !a.Is4() {
		return netip.Addr{}, invalid(field, "%q is not an IPv4 address", s)
	}
	if !want4 && (!a.Is6() || a.Is4In6()) {
		return netip.Addr{}, invalid(field, "%q is not an IPv6 address", s)
	}
	return a, nil
}

// Address families accepted by parseCIDR.
const (
	familyAny = iota
	familyV4
	familyV6
)

// parseCIDR parses a CIDR that must be in canonical form (no host bits).
func parseCIDR(field, s string, family int) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Is4In6() {
		return netip.Prefix{}, invalid(field, "%q is not a valid CIDR (e.g. 10.0.0.0/16 or fd00::/64)", s)
	}
	switch {
	case family == familyV4 && !p.Addr().Is4():
		return netip.Prefix{}, invalid(field, "%q is not an IPv4 CIDR", s)
	case family == familyV6 && !p.Addr().Is6():
		return netip.Prefix{}, invalid(field, "%q is not an IPv6 CIDR", s)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, invalid(field, "%q is not in canonical form: host bits are set (did you mean %q?)", s, m.String())
	}
	return p, nil
}

func validateCreateInstance(req *exampleapi.CreateInstanceRequest) error {
	if req.State == "" {
		req.State = exampleapi.InstanceRunning
	}
	if err := validateName("name", req.Name); err != nil {
		return err
	}
	if err := oneOf("type", "instance type", req.Type, exampleapi.InstanceTypes); err != nil {
		return err
	}
	if req.Zone == "" {
		return invalid("zone", "is required")
	}
	if err := oneOf("state", "state", req.State, exampleapi.InstanceStates); err != nil {
		return err
	}
	if req.PrivateIPv4 != "" {
		if _, err := parseAddr("private_ipv4", req.PrivateIPv4, true); err != nil {
			return err
		}
	}
	if req.PublicIPv4 != "" {
		if _, err := parseAddr("public_ipv4", req.PublicIPv4, true); err != nil {
			return err
		}
	}
	if req.IPv6 != "" {
		if _, err := parseAddr("ipv6", req.IPv6, false); err != nil {
			return err
		}
	}
	return validateTags("tags", req.Tags)
}

func validateCreateNetwork(req *exampleapi.CreateNetworkRequest) error {
	if err := validateNameRegion(req.Name, req.Region); err != nil {
		return err
	}
	p, err := parseCIDR("cidr", req.CIDR, familyV4)
	if err != nil {
		return err
	}
	if p.Bits() < 8 || p.Bits() > 29 {
		return invalid("cidr", "prefix length /%d is out of range (accepted: /8-/29)", p.Bits())
	}
	if req.IPv6CIDR != "" {
		p, err := parseCIDR("ipv6_cidr", req.IPv6CIDR, familyV6)
		if err != nil {
			return err
		}
		if p.Bits() < 16 || p.Bits() > 64 {
			return invalid("ipv6_cidr", "prefix length /%d is out of range (accepted: /16-/64)", p.Bits())
		}
	}
	return nil
}

func validateCreateRoute(req *exampleapi.CreateRouteRequest) error {
	if req.DestinationCIDR == "" {
		return invalid("destination_cidr", "is required")
	}
	if _, err := parseCIDR("destination_cidr", req.DestinationCIDR, familyAny); err != nil {
		return err
	}
	if req.TargetInstanceID == "" {
		return invalid("target_instance_id", "is required")
	}
	return nil
}

// Defaults of optional load balancer fields.
const (
	defaultLBType    = "lb-small"
	defaultIPFamily  = exampleapi.IPFamilyIPv4
	defaultAlgorithm = exampleapi.AlgorithmRoundRobin
)

func validateCreateLoadBalancer(spec *exampleapi.LoadBalancerSpec) error {
	if spec.IPFamily == "" {
		spec.IPFamily = defaultIPFamily
	}
	if err := validateNameRegion(spec.Name, spec.Region); err != nil {
		return err
	}
	if err := oneOf("ip_family", "ip family", spec.IPFamily, exampleapi.IPFamilies); err != nil {
		return err
	}
	return validateLoadBalancerMutable(&spec.LoadBalancerSettings)
}

// validateLoadBalancerMutable checks (and defaults) the fields a PUT may
// change; create checks the same fields the same way.
func validateLoadBalancerMutable(u *exampleapi.UpdateLoadBalancerRequest) error {
	if u.Type == "" {
		u.Type = defaultLBType
	}
	if u.Algorithm == "" {
		u.Algorithm = defaultAlgorithm
	}
	if err := oneOf("type", "load balancer type", u.Type, exampleapi.LoadBalancerTypes); err != nil {
		return err
	}
	if err := oneOf("algorithm", "algorithm", u.Algorithm, exampleapi.Algorithms); err != nil {
		return err
	}
	if err := validateListeners(u.Listeners); err != nil {
		return err
	}
	if err := validateRules(u.Listeners, u.Rules); err != nil {
		return err
	}
	if u.HealthCheck != nil {
		if err := validateHealthCheck(u.HealthCheck); err != nil {
			return err
		}
	}
	if n := len(u.AllowedSourceCIDRs); n > exampleapi.MaxAllowedSourceCIDRs {
		return invalid("allowed_source_cidrs", "has %d CIDRs (at most %d)", n, exampleapi.MaxAllowedSourceCIDRs)
	}
	for i, c := range u.AllowedSourceCIDRs {
		if _, err := parseCIDR(fmt.Sprintf("allowed_source_cidrs[%d]", i), c, familyAny); err != nil {
			return err
		}
	}
	if err := validateTargets(u.Targets); err != nil {
		return err
	}
	if u.TargetPoolID != "" {
		if len(u.Targets) > 0 {
			return invalid("target_pool_id", "is mutually exclusive with targets (%d given): a load balancer either "+
				"lists its targets or forwards to those of a target pool", len(u.Targets))
		}
		if err := validateID("target_pool_id", u.TargetPoolID, "tp-", "target pool"); err != nil {
			return err
		}
	}
	return validateTags("tags", u.Tags)
}

// validateTargets checks a list of instance ids (of a load balancer or a
// target pool): the count first, then each element.
func validateTargets(targets []string) error {
	if n := len(targets); n > exampleapi.MaxTargets {
		return invalid("targets", "has %d targets (at most %d)", n, exampleapi.MaxTargets)
	}
	seen := make(map[string]int, len(targets))
	for i, t := range targets {
		field := fmt.Sprintf("targets[%d]", i)
		if t == "" {
			return invalid(field, "must not be empty")
		}
		if j, dup := seen[t]; dup {
			return invalid(field, "duplicate target %q (also targets[%d])", t, j)
		}
		seen[t] = i
	}
	return nil
}

// validateID checks the kind prefix of an id given in a request body, so a
// load balancer id passed as a pool id says so instead of "not found".
func validateID(field, id, prefix, kind string) error {
	if !strings.HasPrefix(id, prefix) || len(id) == len(prefix) {
		return invalid(field, "%q is not a %s id (%s...)", id, kind, prefix)
	}
	return nil
}

func validateCreateTargetPool(req *exampleapi.CreateTargetPoolRequest) error {
	if err := validateNameRegion(req.Name, req.Region); err != nil {
		return err
	}
	if req.TargetType == "" {
		req.TargetType = exampleapi.TargetTypeInstance
	}
	if err := oneOf("target_type", "target type", req.TargetType, exampleapi.TargetTypes); err != nil {
		return err
	}
	return validateUpdateTargetPool(&exampleapi.UpdateTargetPoolRequest{
		Targets: req.Targets, Tags: req.Tags, DeregistrationDelaySeconds: req.DeregistrationDelaySeconds})
}

func validateUpdateTargetPool(req *exampleapi.UpdateTargetPoolRequest) error {
	if err := validateTargets(req.Targets); err != nil {
		return err
	}
	if err := validateRange("deregistration_delay_seconds", req.DeregistrationDelaySeconds, 0, exampleapi.MaxDeregistrationDelay); err != nil {
		return err
	}
	return validateTags("tags", req.Tags)
}

func validateCreateAddress(req *exampleapi.CreateAddressRequest) error {
	if req.Family == "" {
		req.Family = exampleapi.AddressFamilyIPv4
	}
	if err := validateNameRegion(req.Name, req.Region); err != nil {
		return err
	}
	if err := oneOf("family", "address family", req.Family, exampleapi.AddressFamilies); err != nil {
		return err
	}
	return validateUpdateAddress(&exampleapi.UpdateAddressRequest{LoadBalancerID: req.LoadBalancerID, Tags: req.Tags})
}

func validateUpdateAddress(req *exampleapi.UpdateAddressRequest) error {
	if req.LoadBalancerID != "" {
		if err := validateID("load_balancer_id", req.LoadBalancerID, "lb-", "load balancer"); err != nil {
			return err
		}
	}
	return validateTags("tags", req.Tags)
}

func validateListeners(ls []exampleapi.Listener) error {
	if len(ls) == 0 {
		return invalid("listeners", "at least one listener is required")
	}
	// Checked before the elements: an oversized request costs no more
	// than its size check.
	if len(ls) > exampleapi.MaxListeners {
		return invalid("listeners", "has %d listeners (at most %d)", len(ls), exampleapi.MaxListeners)
	}
	seen := map[string]int{}
	tcpPorts := map[int]int{} // tcp, tls, http and https listeners share the TCP ports
	for i, l := range ls {
		f := fmt.Sprintf("listeners[%d]", i)
		if err := oneOf(f+".protocol", "protocol", l.Protocol, exampleapi.ListenerProtocols); err != nil {
			return err
		}
		if err := validateRange(f+".port", l.Port, 1, 65535); err != nil {
			return err
		}
		if err := validateRange(f+".target_port", l.TargetPort, 1, 65535); err != nil {
			return err
		}
		key := fmt.Sprintf("%s/%d", l.Protocol, l.Port)
		if j, dup := seen[key]; dup {
			return invalid(f+".port", "duplicate listener %s (also listeners[%d]); ports must be unique per protocol", key, j)
		}
		seen[key] = i
		if l.Protocol != exampleapi.ProtocolUDP {
			if j, dup := tcpPorts[l.Port]; dup {
				return invalid(f+".port", "port %d is already used by listeners[%d] (%s/%d); tcp, tls, http and https "+
					"listeners share the load balancer's TCP ports", l.Port, j, ls[j].Protocol, l.Port)
			}
			tcpPorts[l.Port] = i
		}
		if err := validateListenerHTTP(f, l); err != nil {
			return err
		}
	}
	return validateRedirects(ls)
}

// cookieNameRE is an RFC 6265 cookie name (an RFC 7230 token).
var cookieNameRE = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$")

// validateListenerHTTP checks what only http(s) listeners may have:
// certificates (https, required), a redirect (http) and sticky sessions.
func validateListenerHTTP(f string, l exampleapi.Listener) error {
	isHTTPS := l.Protocol == exampleapi.ProtocolHTTPS
	switch n := len(l.CertificateIDs); {
	case isHTTPS && n == 0:
		return invalid(f+".certificate_ids", "is required for https listeners (at least one certificate id: TLS ends at the load balancer)")
	case l.Protocol == exampleapi.ProtocolTLS && n > 0:
		return invalid(f+".certificate_ids", "is only allowed on https listeners, not tls: a tls listener passes TLS through, "+
			"its targets hold the certificates")
	case !isHTTPS && n > 0:
		return invalid(f+".certificate_ids", "is only allowed on https listeners, not %s", l.Protocol)
	case n > exampleapi.MaxListenerCertificates:
		return invalid(f+".certificate_ids", "has %d certificates (at most %d)", n, exampleapi.MaxListenerCertificates)
	}
	seen := make(map[string]int, len(l.CertificateIDs))
	for j, id := range l.CertificateIDs {
		field := fmt.Sprintf("%s.certificate_ids[%d]", f, j)
		if err := validateID(field, id, "cert-", "certificate"); err != nil {
			return err
		}
		if k, dup := seen[id]; dup {
			return invalid(field, "duplicate certificate %q (also certificate_ids[%d])", id, k)
		}
		seen[id] = j
	}
	if l.RedirectToHTTPSPort != 0 {
		if l.Protocol != exampleapi.ProtocolHTTP {
			return invalid(f+".redirect_to_https_port", "is only allowed on http listeners, not %s", l.Protocol)
		}
		if err := validateRange(f+".redirect_to_https_port", l.RedirectToHTTPSPort, 1, 65535); err != nil {
			return err
		}
	}
	if ss := l.StickySessions; ss != nil {
		switch {
		case l.Protocol != exampleapi.ProtocolHTTP && !isHTTPS:
			return invalid(f+".sticky_sessions", "is only allowed on http and https listeners, not %s (cookies need HTTP)", l.Protocol)
		case l.RedirectToHTTPSPort != 0:
			return invalid(f+".sticky_sessions", "is not allowed with redirect_to_https_port: a redirecting listener forwards nothing")
		case !cookieNameRE.MatchString(ss.CookieName):
			return invalid(f+".sticky_sessions.cookie_name", "%q is not a cookie name (1-64 letters, digits and !#$%%&'*+-.^_`|~)", ss.CookieName)
		}
		if err := validateRange(f+".sticky_sessions.ttl_seconds", ss.TTLSeconds, 1, 604800); err != nil {
			return err
		}
	}
	return nil
}

// validateRedirects checks that each redirect names the port of an https
// listener of the same load balancer.
func validateRedirects(ls []exampleapi.Listener) error {
	var httpsPorts []int
	for _, l := range ls {
		if l.Protocol == exampleapi.ProtocolHTTPS {
			httpsPorts = append(httpsPorts, l.Port)
		}
	}
	slices.Sort(httpsPorts)
	for i, l := range ls {
		if l.RedirectToHTTPSPort == 0 || slices.Contains(httpsPorts, l.RedirectToHTTPSPort) {
			continue
		}
		have := "it has none"
		if len(httpsPorts) > 0 {
			have = "https ports: " + strings.Trim(fmt.Sprint(httpsPorts), "[]")
		}
		return invalid(fmt.Sprintf("listeners[%d].redirect_to_https_port", i),
			"%d is not the port of an https listener of this load balancer (%s)", l.RedirectToHTTPSPort, have)
	}
	return nil
}

func validateHealthCheck(hc *exampleapi.HealthCheck) error {
	if err := oneOf("health_check.protocol", "health check protocol", hc.Protocol, exampleapi.HealthCheckProtocols); err != nil {
		return err
	}
	if err := validateRange("health_check.port", hc.Port, 1, 65535); err != nil {
		return err
	}
	isHTTP := hc.Protocol == exampleapi.ProtocolHTTP || hc.Protocol == exampleapi.ProtocolHTTPS
	switch {
	case isHTTP && !strings.HasPrefix(hc.Path, "/"):
		return invalid("health_check.path", "%q must start with / (required for http and https health checks)", hc.Path)
	case !isHTTP && hc.Path != "":
		return invalid("health_check.path", "is only allowed for http and https health checks")
	}
	if err := validateRange("health_check.interval_seconds", hc.IntervalSeconds, 1, 300); err != nil {
		return err
	}
	if err := validateRange("health_check.timeout_seconds", hc.TimeoutSeconds, 1, 60); err != nil {
		return err
	}
	if hc.TimeoutSeconds >= hc.IntervalSeconds {
		return invalid("health_check.timeout_seconds", "%d must be less than interval_seconds (%d)", hc.TimeoutSeconds, hc.IntervalSeconds)
	}
	if err := validateRange("health_check.healthy_threshold", hc.HealthyThreshold, 1, 10); err != nil {
		return err
	}
	return validateRange("health_check.unhealthy_threshold", hc.UnhealthyThreshold, 1, 10)
}

func validateFaults(f exampleapi.Faults) error {
	switch {
	case f.LatencyMs < 0:
		return invalid("latency_ms", "must not be negative")
	case f.ErrorRate < 0 || f.ErrorRate > 1:
		return invalid("error_rate", "%v is out of range (accepted: 0-1)", f.ErrorRate)
	case f.DropRate < 0 || f.DropRate > 1:
		return invalid("drop_rate", "%v is out of range (accepted: 0-1)", f.DropRate)
	case f.RateLimit < 0:
		return invalid("rate_limit", "must not be negative (0 = off)")
	case f.RateBurst < 0:
		return invalid("rate_burst", "must not be negative")
	case f.ProvisionDelayMs < 0:
		return invalid("provision_delay_ms", "must not be negative")
	}
	return nil
}
