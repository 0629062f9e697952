// Package annotations defines the Service annotations the Example cloud
// controller manager reads, in one table (Definitions), and parses them into
// a typed LoadBalancer. docs/annotations.md is generated from the table
// (go run ./hack/gen-annotation-docs).
package annotations

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"
)

// Prefix is the prefix of every annotation this project owns.
const Prefix = "loadbalancer.example.com/"

// Name is the key of a Service annotation.
type Name string

// Kind is the type of an annotation's value, as documented.
type Kind string

// Kinds of annotation values.
const (
	KindString   Kind = "string"
	KindBool     Kind = "bool"
	KindInt      Kind = "int"
	KindEnum     Kind = "enum"
	KindDuration Kind = "duration"
	KindSelector Kind = "label selector"
	KindCIDRList Kind = "CIDR list"
	KindPortList Kind = "port list"
	KindList     Kind = "list"
)

// ApplyPolicy says what the controller does with a rendered plan.
type ApplyPolicy string

// Stricter returns the stricter of two policies (auto < manual <
// plan-only): a Service may tighten the cluster's policy, never loosen it.
func Stricter(a, b ApplyPolicy) ApplyPolicy {
	rank := map[ApplyPolicy]int{ApplyAuto: 0, ApplyManual: 1, ApplyPlanOnly: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Apply policies.
const (
	// ApplyAuto plans and applies on every change.
	ApplyAuto ApplyPolicy = "auto"
	// ApplyManual plans and waits for a person to approve the plan.
	ApplyManual ApplyPolicy = "manual"
	// ApplyPlanOnly plans and never applies (a dry run).
	ApplyPlanOnly ApplyPolicy = "plan-only"
)

// Deletion policies (LBDeletionPolicy).
const (
	// DeletionDelete destroys the load balancer with the Service.
	DeletionDelete = "delete"
	// DeletionRetain hands it over: the controller forgets it, the cloud
	// keeps it.
	DeletionRetain = "retain"
)

// HealthCheck holds the health check annotations. A zero field was not set:
// the renderer fills it from the Service (externalTrafficPolicy) and the
// defaults, which is why none of these has a valid zero value.
type HealthCheck struct {
	Protocol           string // tcp, http or https
	Port               int
	Path               string // http and https only
	Interval           time.Duration
	Timeout            time.Duration
	HealthyThreshold   int
	UnhealthyThreshold int
}

// LoadBalancer is the parsed annotations of one Service. Zero values mean
// "not set" unless a field says otherwise.
type LoadBalancer struct {
	Type          string // lb-small, lb-medium, lb-large
	Internal      bool
	Algorithm     string // round_robin, least_connections, source_ip
	ProxyProtocol bool
	Name          string // load balancer name; empty: derived from the Service UID
	AdoptID       string // existing load balancer (lb-...) to import
	// Address is the reserved address to take: its id (addr-...) or its
	// IP, canonical; spec.loadBalancerIP when the annotation is unset.
	Address string
	// AddressKeep reserves an address when none is named, and keeps it
	// when the Service goes.
	AddressKeep bool
	// DeletionPolicy is DeletionDelete or DeletionRetain; empty until
	// Parse (which sets the default).
	DeletionPolicy string
	// NodeSelector restricts the targets; nil selects every node.
	NodeSelector labels.Selector
	// ApplyPolicy is never empty after Parse (default auto).
	ApplyPolicy ApplyPolicy
	// Group is the load balancer group the Service joins; zero: none.
	Group       Group
	HealthCheck HealthCheck
	// SourceRanges from the legacy Kubernetes annotation, canonical and
	// sorted; spec.loadBalancerSourceRanges wins over it.
	SourceRanges []netip.Prefix
	// HostBitsFixed lists the legacy source ranges that had host bits set
	// and were masked, for a warning.
	HostBitsFixed []string

	// HTTPPorts and HTTPSPorts are the Service ports served as http and
	// https listeners, sorted ascending and unique; the other ports stay
	// tcp (or udp). Whether each is a TCP port of the Service is the
	// renderer's check.
	HTTPPorts  []int32
	HTTPSPorts []int32
	// TLSSecrets are kubernetes.io/tls Secrets of the Service's namespace,
	// in the annotation's order (the first is the default certificate),
	// unique.
	TLSSecrets []string
	// CertificateIDs are certificates already in the cloud (cert-...), in
	// the annotation's order, unique.
	CertificateIDs []string
	// RedirectHTTPToHTTPS makes every http listener redirect to
	// HTTPSRedirectPort.
	RedirectHTTPToHTTPS bool
	StickySessions      StickySessions
	// DeregistrationDelay is how long a node leaving the Service's target
	// pool keeps its connections; nil: the cluster's.
	DeregistrationDelay *time.Duration
	// TargetType is TargetTypeNode or TargetTypeIP; never empty after
	// Parse.
	TargetType string
}

// Pods tells whether the load balancer forwards to the pods directly
// (TargetTypeIP).
func (lb LoadBalancer) Pods() bool { return lb.TargetType == TargetTypeIP }

// StickySessions is cookie session affinity on the http and https
// listeners (not on redirecting http listeners).
type StickySessions struct {
	Enabled    bool
	CookieName string        // "" when not set (renderer applies DefaultStickyCookieName)
	TTL        time.Duration // 0 when not set (renderer applies DefaultStickyCookieTTL)
}

// Group names a load balancer group: Namespace is empty when the
// annotation named none (the Service's own namespace).
type Group struct {
	Namespace string
	Name      string
}

// In is the group with its namespace filled in for a Service of
// namespace ns.
func (g Group) In(ns string) Group {
	if g.Namespace == "" && g.Name != "" {
		g.Namespace = ns
	}
	return g
}

// String is "namespace/name", or "name" without a namespace.
func (g Group) String() string {
	if g.Namespace == "" {
		return g.Name
	}
	return g.Namespace + "/" + g.Name
}

// Error is a problem with one annotation's value. Parse may return several,
// joined with errors.Join; errors.As finds the first.
type Error struct {
	Annotation Name
	Value      string
	// Accepted describes the accepted values, e.g. "tcp, http" or "1-65535".
	Accepted string
	Reason   string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "annotation %q: ", e.Annotation)
	if e.Value != "" {
		fmt.Fprintf(&b, "value %q: ", Truncate(e.Value))
	}
	b.WriteString(e.Reason)
	if e.Accepted != "" {
		fmt.Fprintf(&b, " (accepted: %s)", e.Accepted)
	}
	return b.String()
}

// maxQuoted bounds how much of a value an error quotes: an annotation may
// be 256 KiB, an event message is cut at 1 KiB anyway.
const maxQuoted = 64

// Truncate shortens a value for an error or event, saying how long it was.
func Truncate(v string) string {
	if len(v) <= maxQuoted {
		return v
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", v[:cut], len(v))
}
