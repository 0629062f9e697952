package dataplane

import (
	"maps"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// view is a Plane indexed for serving.
type view struct {
	// healthy tells whether a target passes its load balancer's checks.
	healthy func(*LoadBalancer, Target) bool
	byAddr  map[netip.Addr]*LoadBalancer
	byID    map[string]*LoadBalancer
	// robins are the round robins' state, which outlives the view.
	robins *robins
}

// robins are where the round robins stand: they go on across swaps (every
// write to the cloud is one), as a load balancer's would.
type robins struct {
	mu  sync.Mutex
	wrr map[string]*routing.WRR // by load balancer, listener and rule priority
	rr  map[string]int          // by load balancer and pool ("" for its own)
}

func newView(p *Plane, healthy func(*LoadBalancer, Target) bool, r *robins) *view {
	v := &view{healthy: healthy, byAddr: map[netip.Addr]*LoadBalancer{}, byID: map[string]*LoadBalancer{}, robins: r}
	for i := range p.LoadBalancers {
		lb := &p.LoadBalancers[i]
		// The evaluator counts a load balancer's own targets from its
		// Targets: those that take connections.
		lb.Targets = lb.Targets[:0:0]
		for _, t := range lb.Own {
			lb.Targets = append(lb.Targets, t.ID)
		}
		for _, c := range lb.AllowedSourceCIDRs {
			if p, err := netip.ParsePrefix(c); err == nil { // the cloud took only valid ones
				lb.sources = append(lb.sources, p)
			}
		}
		v.byID[lb.ID] = lb
		for _, a := range lb.Addrs {
			v.byAddr[a] = lb
		}
	}
	return v
}

// admits tells whether client may reach the load balancer at addr.
func (v *view) admits(addr netip.Addr, client net.Addr) bool {
	lb := v.byAddr[addr]
	if lb == nil {
		return true // nothing to reach: the listener's lookup refuses it
	}
	c, err := netip.ParseAddrPort(client.String())
	return err == nil && lb.admits(c.Addr())
}

// listener is the load balancer at addr and its listener on port of
// protocol, if the plane has them.
func (v *view) listener(addr netip.Addr, port int, protocol string) (*LoadBalancer, exampleapi.Listener, bool) {
	lb := v.byAddr[addr]
	if lb == nil {
		return nil, exampleapi.Listener{}, false
	}
	l, ok := routing.ListenerOn(lb.Listeners, port, protocol)
	return lb, l, ok && l.Protocol == protocol
}

// targets counts the healthy targets of a pool of lb (routing.PoolTargets).
func (v *view) targets(lb *LoadBalancer) routing.PoolTargets {
	return func(id string) (int, error) {
		if id == lb.TargetPoolID {
			return len(v.live(lb, lb.Own)), nil
		}
		return len(v.live(lb, lb.Pools[id])), nil
	}
}

// live are the targets of ts that pass lb's health checks.
func (v *view) live(lb *LoadBalancer, ts []Target) []Target {
	out := make([]Target, 0, len(ts))
	for _, t := range ts {
		if v.healthy(lb, t) {
			out = append(out, t)
		}
	}
	return out
}

// pick is the target a decision d of listener l sends the next request
// or connection to, and the backend it came by (its port and protocol;
// the listener's target port for its own targets); ok false when it has
// none.
func (v *view) pick(lb *LoadBalancer, l exampleapi.Listener, d routing.Decision) (t Target, b exampleapi.RuleBackend, ok bool) {
	r := v.robins
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.OwnTargets {
		own := v.live(lb, lb.Own)
		return r.next(lb.ID, "", own), exampleapi.RuleBackend{Port: l.TargetPort}, len(own) > 0
	}
	if len(d.Backends) == 0 {
		return Target{}, b, false
	}
	key := lb.ID + "/" + l.Protocol + "/" + itoa(l.Port) + "/" + d.RuleID()
	w := r.wrr[key]
	if w == nil {
		w = &routing.WRR{}
		r.wrr[key] = w
	}
	b = w.Pick(d.Backends)
	ts := v.live(lb, lb.Pools[b.TargetPoolID])
	return r.next(lb.ID, b.TargetPoolID, ts), b, len(ts) > 0
}

// next is the round robin's next of ts (r.mu held).
func (r *robins) next(lbID, pool string, ts []Target) Target {
	if len(ts) == 0 {
		return Target{}
	}
	key := lbID + "/" + pool
	i := r.rr[key] % len(ts)
	r.rr[key] = i + 1
	return ts[i]
}

// forget drops the state of load balancers p does not have.
func (r *robins) forget(p *Plane) {
	have := p.ids()
	gone := func(k string) bool { return !have[strings.SplitN(k, "/", 2)[0]] }
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.DeleteFunc(r.wrr, func(k string, _ *routing.WRR) bool { return gone(k) })
	maps.DeleteFunc(r.rr, func(k string, _ int) bool { return gone(k) })
}
