package annotations

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Parse reads the annotations of one Service. Values are trimmed; an empty
// value counts as not set. Unknown annotations with our Prefix are errors,
// so a typo cannot silently fall back to a default. Every problem is
// reported (errors.Join of *Error, ordered by annotation name).
func Parse(ann map[string]string) (LoadBalancer, error) {
	parses.Add(1)
	lb := LoadBalancer{ApplyPolicy: ApplyAuto, DeletionPolicy: DeletionDelete, TargetType: TargetTypeNode}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		raw := ann[k]
		def, ok := Lookup(Name(k))
		if !ok {
			if _, retired := Retired[Name(k)]; retired {
				continue // reported by the controller, never acted on
			}
			if strings.HasPrefix(k, Prefix) {
				errs = append(errs, unknown(Name(k), raw))
			}
			continue
		}
		v := strings.TrimSpace(raw)
		if v == "" {
			continue
		}
		if err := def.parse(v, &lb); err != nil {
			errs = append(errs, &Error{
				Annotation: def.Name, Value: raw,
				Accepted: strings.Join(def.Accepted, ", "), Reason: err.Error(),
			})
		}
	}
	if len(errs) == 0 {
		errs = append(errs, crossCheck(&lb, ann)...)
	}
	return lb, errors.Join(errs...)
}

// crossCheck validates combinations, against the defaults the renderer
// would fill in for unset values.
func crossCheck(lb *LoadBalancer, ann map[string]string) []error {
	var errs []error
	hc := &lb.HealthCheck
	if hc.Path != "" {
		switch hc.Protocol {
		case "tcp":
			errs = append(errs, &Error{
				Annotation: LBHealthCheckPath, Value: ann[string(LBHealthCheckPath)],
				Reason: fmt.Sprintf("a path needs an http or https health check, but %s is tcp", LBHealthCheckProtocol),
			})
		case "":
			hc.Protocol = "http"
		}
	}
	// The name forces replacement: adopting under another name would
	// destroy the adopted load balancer on the first apply.
	if lb.AdoptID != "" && lb.Name == "" {
		errs = append(errs, &Error{
			Annotation: LBAdoptID, Value: ann[string(LBAdoptID)],
			Reason: fmt.Sprintf("needs %s set to the existing load balancer's name, or the first apply would replace it", LBName),
		})
	}
	if lb.Internal && (lb.Address != "" || lb.AddressKeep) {
		name := LBAddress
		if lb.Address == "" {
			name = LBAddressKeep
		}
		errs = append(errs, &Error{
			Annotation: name, Value: ann[string(name)],
			Reason: fmt.Sprintf("an internal load balancer (%s) takes its address from its network, not a reserved one", LBInternal),
		})
	}
	if lb.DeletionPolicy == DeletionRetain && lb.Group != (Group{}) {
		errs = append(errs, &Error{
			Annotation: LBDeletionPolicy, Value: ann[string(LBDeletionPolicy)],
			Reason: fmt.Sprintf("retain hands over a Service's own load balancer, not a group's (%s)", LBGroup),
		})
	}
	errs = append(errs, crossCheckListeners(lb, ann)...)
	errs = append(errs, crossCheckTargetType(lb, ann)...)
	interval, timeout := hc.Interval, hc.Timeout
	if interval == 0 {
		interval = DefaultHealthCheckInterval
	}
	if timeout == 0 {
		timeout = DefaultHealthCheckTimeout
	}
	if timeout >= interval {
		name, other := LBHealthCheckTimeout, LBHealthCheckInterval
		if hc.Timeout == 0 {
			name, other = other, name
		}
		errs = append(errs, &Error{
			Annotation: name, Value: ann[string(name)],
			Reason: fmt.Sprintf("the health check timeout (%s) must be shorter than the interval (%s); set %s accordingly", timeout, interval, other),
		})
	}
	return errs
}

// crossCheckTargetType refuses, with target type ip, what names nodes
// and a group: the pods are the targets, and a group's load balancer is
// its members' nodes' (docs/adr/0024-pod-targets.md).
func crossCheckTargetType(lb *LoadBalancer, ann map[string]string) []error {
	if !lb.Pods() {
		return nil
	}
	var errs []error
	for _, n := range []struct {
		name Name
		set  bool
		what string
	}{
		{LBNodeSelector, lb.NodeSelector != nil, "picks nodes"},
		{LBHealthCheckPort, lb.HealthCheck.Port != 0, "names a port of the nodes (each pod is probed at its own port)"},
		{LBGroup, lb.Group != (Group{}), "shares a load balancer that forwards to its members' nodes"},
	} {
		if n.set {
			errs = append(errs, &Error{Annotation: n.name, Value: ann[string(n.name)],
				Reason: fmt.Sprintf("%s, but %s is %s: the load balancer forwards to the pods", n.what, LBTargetType, TargetTypeIP)})
		}
	}
	return errs
}

func unknown(n Name, value string) *Error {
	e := &Error{Annotation: n, Value: value, Reason: "unknown annotation"}
	best, bestDist := Name(""), 4 // suggest only close matches
	for _, d := range Definitions {
		if dist := editDistance(string(n), string(d.Name)); dist < bestDist {
			best, bestDist = d.Name, dist
		}
	}
	if best != "" {
		e.Reason += fmt.Sprintf("; did you mean %s?", best)
	}
	return e
}

func oneOf(v string, accepted []string, dst *string) error {
	if !slices.Contains(accepted, v) {
		return errors.New("unknown value")
	}
	*dst = v
	return nil
}

// parseBool accepts only true and false: "1", "yes" or "on" in YAML are
// easy to mistype, and a wrong guess changes a load balancer.
func parseBool(v string, dst *bool) error {
	switch v {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return errors.New("not a boolean")
	}
	return nil
}

func parseInt(v string, lo, hi int, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < lo || n > hi {
		return fmt.Errorf("%d is out of range", n)
	}
	*dst = n
	return nil
}

// parseSeconds takes a Go duration or a bare number of seconds; the API
// counts in whole seconds.
func parseSeconds(v string, lo, hi time.Duration, dst *time.Duration) error {
	d, err := time.ParseDuration(v)
	if n, aerr := strconv.Atoi(v); aerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	switch {
	case err != nil:
		return errors.New("not a duration")
	case d%time.Second != 0:
		return fmt.Errorf("%s is not a whole number of seconds", d)
	case d < lo || d > hi:
		return fmt.Errorf("%s is out of range", d)
	}
	*dst = d
	return nil
}

var (
	nameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	adoptIDRE = regexp.MustCompile(`^lb-[A-Za-z0-9]{1,64}$`)
)

func parseName(v string, lb *LoadBalancer) error {
	if len(v) > 253 || !nameRE.MatchString(v) {
		return errors.New("not a valid load balancer name")
	}
	lb.Name = v
	return nil
}

// addressIDRE is the cloud's address id.
var addressIDRE = regexp.MustCompile(`^addr-[A-Za-z0-9]{1,64}$`)

func parseAddress(v string, lb *LoadBalancer) error {
	if addressIDRE.MatchString(v) {
		lb.Address = v
		return nil
	}
	ip, err := netip.ParseAddr(v)
	if err != nil || ip.Zone() != "" {
		return errors.New("neither an address id nor an IP")
	}
	lb.Address = ip.Unmap().String()
	return nil
}

// IsAddressID tells an address id from an IP in LoadBalancer.Address.
func IsAddressID(v string) bool { return addressIDRE.MatchString(v) }

func parseAdoptID(v string, lb *LoadBalancer) error {
	if !adoptIDRE.MatchString(v) {
		return errors.New("not a load balancer id")
	}
	lb.AdoptID = v
	return nil
}

// ParseGroup reads only the group annotation: a Service's membership
// does not depend on its other annotations being valid (an invalid member
// is left out of its group's rendering, with its own error). Zero when
// unset.
func ParseGroup(ann map[string]string) (Group, error) {
	v := strings.TrimSpace(ann[string(LBGroup)])
	if v == "" {
		return Group{}, nil
	}
	var lb LoadBalancer
	if err := parseGroup(v, &lb); err != nil {
		d, _ := Lookup(LBGroup)
		return Group{}, &Error{Annotation: LBGroup, Value: ann[string(LBGroup)], Accepted: strings.Join(d.Accepted, ", "), Reason: err.Error()}
	}
	return lb.Group, nil
}

// parseGroup takes name or namespace/name, each a DNS label.
func parseGroup(v string, lb *LoadBalancer) error {
	ns, name, cross := strings.Cut(v, "/")
	if !cross {
		ns, name = "", v
	}
	for _, part := range []struct{ what, v string }{{"namespace", ns}, {"name", name}} {
		if part.v == "" && (part.what == "name" || cross) {
			return fmt.Errorf("the group %s is empty", part.what)
		}
		if part.v != "" {
			if errs := validation.IsDNS1123Label(part.v); len(errs) > 0 {
				return fmt.Errorf("the group %s %q is not a DNS label: %s", part.what, Truncate(part.v), strings.Join(errs, "; "))
			}
		}
	}
	lb.Group = Group{Namespace: ns, Name: name}
	return nil
}

func parseSelector(v string, lb *LoadBalancer) error {
	sel, err := labels.Parse(v)
	if err != nil {
		return fmt.Errorf("not a label selector: %w", err)
	}
	lb.NodeSelector = sel
	return nil
}

func parsePath(v string, lb *LoadBalancer) error {
	switch {
	case !strings.HasPrefix(v, "/"):
		return errors.New("must start with /")
	case len(v) > 1024:
		return errors.New("longer than 1024 bytes")
	case strings.ContainsFunc(v, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
	}):
		return errors.New("contains spaces, control characters or invalid UTF-8")
	}
	lb.HealthCheck.Path = v
	return nil
}

func parseSourceRanges(v string, lb *LoadBalancer) error {
	seen := map[netip.Prefix]bool{}
	var out []netip.Prefix
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil || p.Addr().Is4In6() || p.Addr().Zone() != "" {
			return fmt.Errorf("%q is not a CIDR", s)
		}
		if m := p.Masked(); m != p {
			lb.HostBitsFixed = append(lb.HostBitsFixed, s)
			p = m
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	lb.SourceRanges = SortPrefixes(out)
	return nil
}

// SortPrefixes sorts CIDRs IPv4 first, then by address and length.
func SortPrefixes(ps []netip.Prefix) []netip.Prefix {
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return ps
}

// editDistance is the Levenshtein distance, for "did you mean".
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
