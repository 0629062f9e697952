package simulator

import (
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// Target health: what the load balancer's health check makes of each
// effective or draining target. A draining target fails it at once, which
// is what a Kubernetes node that is leaving does: kube-proxy's health check
// node port answers 503 for it, so Services with externalTrafficPolicy:
// Local stop sending there while open connections finish.

// targetHealth answers the health of the load balancer's targets at the
// clock's time.
func (c *cloud) targetHealth(lbID string) (exampleapi.TargetHealthResponse, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.TargetHealthResponse, error) {
		s, err := loadLBTargets(tx, lbID, c.now(), nil)
		if err != nil {
			return exampleapi.TargetHealthResponse{}, err
		}
		out := exampleapi.TargetHealthResponse{LoadBalancerID: lbID, Targets: []exampleapi.TargetHealth{}}
		for _, id := range s.known(nil) {
			out.Targets = append(out.Targets, s.health(id))
		}
		ips, err := ipTargetHealth(tx, s.lb, c.now())
		out.Targets = append(out.Targets, ips...)
		return out, err
	})
}

// health is one target's verdict. An instance that is not running fails
// the check whether or not it drains: it cannot answer even a 503.
func (s lbTargets) health(id string) exampleapi.TargetHealth {
	state, until := s.state(id)
	switch state {
	case exampleapi.ConnectionServing:
		return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetHealthy, Reason: "instance running"}
	case exampleapi.ConnectionDraining:
		if inst := s.instance[id]; inst != exampleapi.InstanceRunning {
			return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetUnhealthy, Reason: "instance " + inst}
		}
		return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetDraining, DrainingUntil: ptrTime(until),
			Reason: "deregistering until " + until.Format(time.RFC3339) + ": the health check answers 503"}
	case exampleapi.ConnectionStopped:
		return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetUnhealthy, Reason: "instance " + s.instance[id]}
	}
	return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetUnhealthy, Reason: "instance deleted"}
}

// ipTargetHealth is the health of the targets of the pools of target type
// ip that lb's rules and its rule sets' forward to, pool by pool in the
// rules' order (allRules): a
// target a route reaches is healthy (until a probe says otherwise), one
// no route reaches is not; those removed drain for the pool's delay.
func ipTargetHealth(tx *bolt.Tx, lb exampleapi.LoadBalancer, now time.Time) ([]exampleapi.TargetHealth, error) {
	var out []exampleapi.TargetHealth
	seen := map[string]bool{}
	var routed routes
	rules, err := allRules(tx, lb)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		for _, b := range r.Backends {
			if seen[b.TargetPoolID] {
				continue
			}
			seen[b.TargetPoolID] = true
			tp, err := storedTargetPools.get(tx, b.TargetPoolID)
			if err != nil {
				return nil, err
			}
			if tp.TargetTypeOrDefault() != exampleapi.TargetTypeIP {
				continue
			}
			if routed == nil {
				if routed, err = activeRoutes(tx, lb.Region); err != nil {
					return nil, err
				}
			}
			for _, t := range tp.Targets {
				if seen[t] {
					continue
				}
				seen[t] = true
				h := exampleapi.TargetHealth{ID: t, Health: exampleapi.TargetHealthy, Reason: "routed"}
				if ap, err := exampleapi.ParseIPTarget(t); err != nil || !routed.reach(ap.Addr()) {
					h.Health, h.Reason = exampleapi.TargetUnhealthy, "no route of the region reaches it"
				}
				out = append(out, h)
			}
			for _, d := range draining(tp.Draining, now) {
				out = append(out, exampleapi.TargetHealth{ID: d.ID, Health: exampleapi.TargetDraining, DrainingUntil: ptrTime(d.Until),
					Reason: "deregistering until " + d.Until.Format(time.RFC3339)})
			}
		}
	}
	return out, nil
}

// probed is health as the data plane's probes see it: a target the model
// calls healthy (serving) is healthy only while it passes the load
// balancer's health check, if it has one.
func probed(health *exampleapi.TargetHealthResponse, dp *dataplane.Server) {
	for i, t := range health.Targets {
		if t.Health != exampleapi.TargetHealthy {
			continue
		}
		p := dp.Probe(health.LoadBalancerID, t.ID)
		switch {
		case !p.Checked:
		case !p.Known:
			health.Targets[i].Health, health.Targets[i].Reason = exampleapi.TargetUnhealthy, "health check: not probed yet"
		case !p.Healthy:
			health.Targets[i].Health, health.Targets[i].Reason = exampleapi.TargetUnhealthy, "health check failing"
		default:
			health.Targets[i].Reason = "health check passing"
		}
	}
}

// poolTargetHealth is the health of pool id's targets as every load
// balancer forwarding to it finds them (exampleapi.TargetPoolHealthResponse):
// a target is as healthy as the least healthy verdict, unused without
// load balancers.
func (s *Server) poolTargetHealth(id string) (exampleapi.TargetPoolHealthResponse, error) {
	var tp exampleapi.TargetPool
	var lbs []string
	err := s.cloud.view(func(tx *bolt.Tx) error {
		var err error
		if tp, err = storedTargetPools.get(tx, id); err != nil {
			return err
		}
		lbs, err = poolReferrers(tx, id)
		return err
	})
	if err != nil {
		return exampleapi.TargetPoolHealthResponse{}, err
	}
	out := exampleapi.TargetPoolHealthResponse{TargetPoolID: id, LoadBalancerIDs: lbs, Targets: []exampleapi.TargetHealth{}}
	if out.LoadBalancerIDs == nil {
		out.LoadBalancerIDs = []string{}
	}
	verdicts := map[string][]exampleapi.TargetHealth{}
	for _, lb := range lbs {
		h, err := s.lbTargetHealth(lb)
		if err != nil {
			return exampleapi.TargetPoolHealthResponse{}, err
		}
		for _, t := range h.Targets {
			t.Reason = lb + ": " + t.Reason
			verdicts[t.ID] = append(verdicts[t.ID], t)
		}
	}
	ids := slices.Clone(tp.Targets)
	for _, d := range draining(tp.Draining, s.cloud.now()) {
		ids = append(ids, d.ID)
	}
	for _, t := range ids {
		out.Targets = append(out.Targets, worst(t, verdicts[t], len(lbs)))
	}
	return out, nil
}

// healthRank orders verdicts from best to worst.
var healthRank = map[string]int{exampleapi.TargetHealthy: 0, exampleapi.TargetDraining: 1, exampleapi.TargetUnhealthy: 2}

// worst is target id's verdict from those of lbs load balancers: the
// least healthy, unhealthy when one of them does not report it, unused
// with none.
func worst(id string, vs []exampleapi.TargetHealth, lbs int) exampleapi.TargetHealth {
	switch {
	case lbs == 0:
		return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetUnused, Reason: "no load balancer forwards to the pool"}
	case len(vs) < lbs:
		return exampleapi.TargetHealth{ID: id, Health: exampleapi.TargetUnhealthy, Reason: "not a target of every load balancer forwarding to the pool yet"}
	}
	w := vs[0]
	for _, v := range vs[1:] {
		if healthRank[v.Health] > healthRank[w.Health] {
			w = v
		}
	}
	return w
}
