package dataplane

import (
	"context"
	"crypto/tls"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Health checks: every target of a load balancer with a health check is
// probed by it, as the cloud would. A target's first probe decides where
// it starts; after that it takes HealthyThreshold passes in a row to come
// back and UnhealthyThreshold failures to leave. A target not probed yet
// takes nothing. Health lives beside the planes, not in them: a swap that
// keeps a target and its check keeps its probe and its state.

// probeKey is one target's probe: the check and the address it probes.
// An ip target (a pod) is probed on its own port, the port it serves:
// the check's port stands for an instance's (a node's health check port).
type probeKey struct {
	lb, target string
	addr       netip.Addr
	check      exampleapi.HealthCheck
}

// probeOf is target t's probe by lb's health check.
func probeOf(lb *LoadBalancer, t Target) probeKey {
	k := probeKey{lb.ID, t.ID, t.Addr, *lb.HealthCheck}
	if t.Port != 0 {
		k.check.Port = t.Port
	}
	return k
}

type probe struct {
	stop            context.CancelFunc
	known, healthy  atomic.Bool
	passes, failing int
}

// prober runs the probes of the plane of the moment.
type prober struct {
	mu     sync.Mutex
	probes map[probeKey]*probe
}

// reconcile starts the probes p needs and stops the others.
func (pr *prober) reconcile(p *Plane) {
	want := map[probeKey]bool{}
	for _, lb := range p.LoadBalancers {
		if lb.HealthCheck == nil {
			continue
		}
		for _, ts := range append([][]Target{lb.Own}, slices.Collect(maps.Values(lb.Pools))...) {
			for _, t := range ts {
				want[probeOf(&lb, t)] = true
			}
		}
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.probes == nil {
		pr.probes = map[probeKey]*probe{}
	}
	// A target whose check changed keeps where it stood: the new check
	// moves it by its thresholds, it does not start unknown (taking
	// nothing) again.
	type target struct {
		lb, id string
		addr   netip.Addr
	}
	was := map[target]*probe{}
	for k, pb := range pr.probes {
		if !want[k] {
			pb.stop()
			delete(pr.probes, k)
			was[target{k.lb, k.target, k.addr}] = pb
		}
	}
	for k := range want {
		if _, ok := pr.probes[k]; ok {
			continue
		}
		ctx, stop := context.WithCancel(context.Background())
		pb := &probe{stop: stop}
		if old := was[target{k.lb, k.target, k.addr}]; old != nil && old.known.Load() {
			pb.healthy.Store(old.healthy.Load())
			pb.known.Store(true)
		}
		pr.probes[k] = pb
		go pb.run(ctx, k)
	}
}

// stopAll stops every probe.
func (pr *prober) stopAll() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for k, pb := range pr.probes {
		pb.stop()
		delete(pr.probes, k)
	}
}

// healthy tells whether t takes traffic of lb: lb checks nothing, or t
// passed.
func (pr *prober) healthy(lb *LoadBalancer, t Target) bool {
	if lb.HealthCheck == nil {
		return true
	}
	pr.mu.Lock()
	pb := pr.probes[probeOf(lb, t)]
	pr.mu.Unlock()
	return pb != nil && pb.known.Load() && pb.healthy.Load()
}

// Probe is what a load balancer's health check says of one target.
type Probe struct {
	// Checked: the load balancer has a health check and probes the
	// target (it is one of its targets).
	Checked bool
	// Known: a probe has answered; Healthy: the target passes.
	Known, Healthy bool
}

// Probe is what load balancer lbID's health check says of target.
func (s *Server) Probe(lbID, target string) Probe {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	for k, pb := range s.health.probes {
		if k.lb == lbID && k.target == target {
			return Probe{Checked: true, Known: pb.known.Load(), Healthy: pb.healthy.Load()}
		}
	}
	return Probe{}
}

func (pb *probe) run(ctx context.Context, k probeKey) {
	interval := time.Duration(max(k.check.IntervalSeconds, 1)) * time.Second
	for {
		pb.record(k.check, check(ctx, k))
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// record counts one probe's result.
func (pb *probe) record(hc exampleapi.HealthCheck, pass bool) {
	if pass {
		pb.passes, pb.failing = pb.passes+1, 0
	} else {
		pb.passes, pb.failing = 0, pb.failing+1
	}
	switch {
	case !pb.known.Load():
		pb.healthy.Store(pass)
		pb.known.Store(true)
	case pass && pb.passes >= max(hc.HealthyThreshold, 1):
		pb.healthy.Store(true)
	case !pass && pb.failing >= max(hc.UnhealthyThreshold, 1):
		pb.healthy.Store(false)
	}
}

// check probes once: a connection (tcp), or a GET answered 200-399.
func check(ctx context.Context, k probeKey) bool {
	timeout := time.Duration(max(k.check.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(k.addr.String(), strconv.Itoa(k.check.Port))
	if k.check.Protocol == exampleapi.ProtocolTCP {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.check.Protocol+"://"+addr+k.check.Path, nil)
	if err != nil {
		return false
	}
	res, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	_ = res.Body.Close()
	return res.StatusCode >= 200 && res.StatusCode < 400
}

// probeClient probes as a load balancer does: a connection per probe, the
// target's certificate not verified (it is the target's own).
var probeClient = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a health probe checks liveness, not identity
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}
