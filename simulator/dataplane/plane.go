// Package dataplane is the Example load balancers' traffic: for every
// listener of every active load balancer it binds a socket on the load
// balancer's address and serves it by what was applied, through the rule
// evaluator of package routing (docs/adr/0023-the-data-plane.md).
//
// The simulator compiles its store into a Plane after every write and
// hands it to Swap; a request (a connection, for tcp) reads the plane
// once, so an apply never serves half of a change.
package dataplane

import (
	"crypto/tls"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Plane is the cloud's traffic configuration at one moment. Swap takes
// it over: the caller changes it no more.
type Plane struct {
	LoadBalancers []LoadBalancer
	// Next is when the plane changes without a write (a load balancer's
	// provisioning or a target's drain ends); zero: never.
	Next time.Time
}

// ids are the ids of p's load balancers: what the state kept across
// swaps (round robins, session keys) is forgotten for the others.
func (p *Plane) ids() map[string]bool {
	out := make(map[string]bool, len(p.LoadBalancers))
	for _, lb := range p.LoadBalancers {
		out[lb.ID] = true
	}
	return out
}

// LoadBalancer is one active load balancer as the data plane serves it.
type LoadBalancer struct {
	// LoadBalancer is the load balancer as applied: its listeners and
	// rules. Its Targets are set from Own when it is served.
	exampleapi.LoadBalancer
	// RuleSets are its rule sets, whose rules its listeners' keyed rules
	// are ordered with.
	RuleSets []exampleapi.RuleSet
	// Addrs are its addresses (IPv4, and IPv6 when dual-stack).
	Addrs []netip.Addr
	// Own are the targets a listener without rules forwards to: its own,
	// or its pool's, those that take new connections.
	Own []Target
	// Pools are the targets taking new connections of each pool its
	// rules name, by pool id.
	Pools map[string][]Target
	// Draining are targets no longer taking connections whose open ones
	// are kept (their deregistration delay runs): by instance id.
	Draining map[string]bool
	// Certificates are its https listeners', by certificate id.
	Certificates map[string]*tls.Certificate

	// sources are its AllowedSourceCIDRs, parsed when it is served.
	sources []netip.Prefix
}

// AllRules are its own rules, then its rule sets', in the sets' order:
// every backend it forwards to.
func (lb *LoadBalancer) AllRules() []exampleapi.Rule {
	rules := lb.Rules
	for _, s := range lb.RuleSets {
		rules = append(rules[:len(rules):len(rules)], s.Rules...)
	}
	return rules
}

// admits tells whether a client at addr may reach the load balancer:
// any, unless it lists the CIDRs allowed in.
func (lb *LoadBalancer) admits(addr netip.Addr) bool {
	if len(lb.AllowedSourceCIDRs) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, p := range lb.sources {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Target is where traffic goes: an instance at its private address, or a
// target of a pool of target type ip (a pod) at its address and Port.
type Target struct {
	ID   string
	Addr netip.Addr
	// Port is the ip target's own port; 0 for an instance, reached on the
	// listener's target port or the backend's port.
	Port int
}

// at is the target's address on port (its own, if it has one), as
// dialled.
func (t Target) at(port int) string {
	if t.Port != 0 {
		port = t.Port
	}
	return net.JoinHostPort(t.Addr.String(), strconv.Itoa(port))
}

// keeps tells whether connections to target id stay open: it is a target
// or drains.
func (lb *LoadBalancer) keeps(id string) bool {
	if lb.Draining[id] {
		return true
	}
	for _, t := range lb.Own {
		if t.ID == id {
			return true
		}
	}
	for _, ts := range lb.Pools {
		for _, t := range ts {
			if t.ID == id {
				return true
			}
		}
	}
	return false
}
