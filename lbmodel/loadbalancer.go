package lbmodel

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// LoadBalancer is a Gateway API Gateway's load balancer as the gateway
// package decided it: its listeners, one per port and transport, and its
// routes' rules.
type LoadBalancer struct {
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	UID       string     `json:"uid,omitempty"`
	Listeners []Listener `json:"listeners,omitempty"`
	Rules     []Rule     `json:"rules,omitempty"`
	// Certificates are the certificate chains (PEM) of the TLS Secrets
	// its HTTPS listeners serve, by "namespace/name" of the Secret (the
	// certificates module's keys; their private keys reach terraform as
	// a Service's do, never rendered).
	Certificates map[string]string `json:"certificates,omitempty"`
}

// Listener is one cloud listener of a load balancer.
type Listener struct {
	// Protocol is the cloud's: http, https, tls (passthrough), tcp or udp.
	Protocol string `json:"protocol"`
	Port     int    `json:"port"`
	// TargetPort is where a tcp or udp listener forwards; an http(s)
	// listener's rules say where each request goes, and 0 takes its own
	// port (the cloud requires one, and no request reaches it: the load
	// balancer has no targets of its own).
	TargetPort int `json:"targetPort,omitempty"`
	// Certificates are an https listener's: keys of
	// LoadBalancer.Certificates, in the order the Gateway's listeners name
	// them.
	Certificates []string `json:"certificates,omitempty"`
}

// Ref is the Gateway's identity.
func (lb LoadBalancer) Ref() objectref.Ref { return objectref.Gateway(lb.Namespace, lb.Name, lb.UID) }

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
// too many listeners, more rules than the cloud's budget, a certificate
// served without its chain. Its rules are checked one by one where they
// are decided (Rule.Validate): a rule the cloud would refuse fails its
// route, never the load balancer.
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
		for _, c := range l.Certificates {
			if lb.Certificates[c] == "" {
				return fmt.Errorf("listener %s:%d serves certificate %s, which has no certificate chain", l.Protocol, l.Port, c)
			}
		}
	}
	return nil
}
