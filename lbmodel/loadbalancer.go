package lbmodel

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// LoadBalancer is one load balancer as a front-end decided it: a Gateway
// API Gateway's (package gateway: its listeners, one per port and
// transport, and its routes' rules) or a Service's own (package
// servicemodel: its listeners, one per Service port, forwarding to
// Targets or a target pool). The fields after Rules are what a Service
// decides of the load balancer itself; a Gateway's leaves them unset and
// the renderer's defaults apply.
type LoadBalancer struct {
	// Kind is what it is for: objectref.KindService, or "" for a Gateway.
	Kind      string     `json:"kind,omitempty"`
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	UID       string     `json:"uid,omitempty"`
	Listeners []Listener `json:"listeners,omitempty"`
	Rules     []Rule     `json:"rules,omitempty"`
	// Certificates are the certificate chains (PEM) of the TLS Secrets
	// its HTTPS listeners serve, by the Secret's "namespace/name" for a
	// Gateway, by its name for a Service (the certificates module's keys;
	// their private keys reach terraform from the environment, never
	// rendered).
	Certificates map[string]string `json:"certificates,omitempty"`

	// What a Service decides of the load balancer itself: its cloud name
	// and region, its type (lb-small ...), algorithm and ip family (ipv4
	// or dualstack), internal or not; its health check (nil: nothing to
	// probe, udp only) and the canonical CIDRs allowed in (none: anyone);
	// where its listeners forward (see Listener.TargetPort): the target
	// pool holding its nodes, or without one the instances it lists itself
	// (a Pool's Targets); its tags (its owner's).
	CloudName    string            `json:"cloudName,omitempty"`
	Region       string            `json:"region,omitempty"`
	Type         string            `json:"type,omitempty"`
	Targets      []string          `json:"targets,omitempty"`
	Algorithm    string            `json:"algorithm,omitempty"`
	IPFamily     string            `json:"ipFamily,omitempty"`
	HealthCheck  *HealthCheck      `json:"healthCheck,omitempty"`
	Internal     bool              `json:"internal,omitempty"`
	SourceCIDRs  []string          `json:"sourceCIDRs,omitempty"`
	TargetPoolID string            `json:"targetPoolID,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	// AdoptID imports the existing load balancer of that id.
	AdoptID string `json:"adoptID,omitempty"`
	// DeregistrationDelay is what it asks of its target pool; nil: the
	// cluster's. (A metav1.Duration: it reads "2m0s" in a golden file.)
	DeregistrationDelay *metav1.Duration `json:"deregistrationDelay,omitempty"`
	// Warnings say what the translation skipped or adjusted (a node
	// without a usable providerID, a source range with host bits set).
	Warnings []string `json:"warnings,omitempty"`
}

// Listener is one cloud listener of a load balancer.
type Listener struct {
	// Protocol is the cloud's: http, https, tls (passthrough), tcp or udp.
	Protocol string `json:"protocol"`
	Port     int    `json:"port"`
	// TargetPort is where the listener forwards on its targets (a
	// Service's node port); an http(s) listener's rules say where each
	// request goes, and 0 takes its own port (the cloud requires one, and
	// no request reaches it: the load balancer has no targets of its own).
	TargetPort int `json:"targetPort,omitempty"`
	// ProxyProtocol sends a tcp listener's targets the PROXY protocol
	// header.
	ProxyProtocol bool `json:"proxyProtocol,omitempty"`
	// Certificates are an https listener's: keys of
	// LoadBalancer.Certificates, in the order the Gateway's listeners or
	// the Service's annotation name them.
	Certificates []string `json:"certificates,omitempty"`
	// CertificateIDs (https: certificates already in the cloud),
	// HTTPSRedirectPort (http: redirect to that https port) and
	// StickySessions (http and https) are a Service's, as the cloud takes
	// them.
	CertificateIDs    []string                   `json:"certificateIDs,omitempty"`
	HTTPSRedirectPort int                        `json:"httpsRedirectPort,omitempty"`
	StickySessions    *exampleapi.StickySessions `json:"stickySessions,omitempty"`
}

// HealthCheck is how a load balancer probes its targets.
type HealthCheck struct {
	// Protocol is tcp, http or https; Path is an http(s) probe's.
	Protocol           string `json:"protocol"`
	Port               int    `json:"port"`
	Path               string `json:"path,omitempty"`
	IntervalSeconds    int    `json:"intervalSeconds"`
	TimeoutSeconds     int    `json:"timeoutSeconds"`
	HealthyThreshold   int    `json:"healthyThreshold"`
	UnhealthyThreshold int    `json:"unhealthyThreshold"`
}

// Ref is the identity of the object it is for: its Service, or its
// Gateway.
func (lb LoadBalancer) Ref() objectref.Ref {
	if lb.Kind == objectref.KindService {
		return objectref.Ref{Kind: objectref.KindService, Namespace: lb.Namespace, Name: lb.Name, UID: lb.UID}
	}
	return objectref.Gateway(lb.Namespace, lb.Name, lb.UID)
}

// SortedListeners are its listeners in the order they render: by port,
// then protocol.
func (lb LoadBalancer) SortedListeners() []Listener {
	ls := slices.Clone(lb.Listeners)
	slices.SortFunc(ls, func(a, b Listener) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
	})
	return ls
}

// Validate refuses a load balancer the cloud could not build: none or
// too many listeners, a listener the cloud would refuse (validate.go) or
// of too many certificates,
// more rules than the cloud's budget, a certificate served without its
// chain, a health check, source range or target it could not take. Its
// rules are checked one by one where they are decided (Rule.Validate): a
// rule the cloud would refuse fails its route, never the load balancer.
func (lb LoadBalancer) Validate() error {
	switch {
	case len(lb.Listeners) == 0:
		return errors.New("no listener to serve")
	case len(lb.Listeners) > exampleapi.MaxListeners:
		return fmt.Errorf("%d listeners: the cloud takes at most %d", len(lb.Listeners), exampleapi.MaxListeners)
	case len(lb.Rules) > exampleapi.MaxRules:
		return fmt.Errorf("%d rules (one per route rule, match and host name): the cloud takes at most %d", len(lb.Rules), exampleapi.MaxRules)
	}
	for _, l := range lb.SortedListeners() {
		if n := len(l.Certificates) + len(l.CertificateIDs); n > exampleapi.MaxListenerCertificates {
			return fmt.Errorf("listener %s:%d serves %d certificates: the cloud takes at most %d", l.Protocol, l.Port, n, exampleapi.MaxListenerCertificates)
		}
		for _, c := range l.Certificates {
			if lb.Certificates[c] == "" {
				return fmt.Errorf("listener %s:%d serves certificate %s, which has no certificate chain", l.Protocol, l.Port, c)
			}
		}
	}
	if err := checkListeners(lb.Listeners); err != nil {
		return err
	}
	return lb.checkForwarding()
}
