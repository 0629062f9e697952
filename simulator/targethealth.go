package simulator

import (
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
		return out, nil
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
