package simulator

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// The data plane (docs/adr/0023-the-data-plane.md): after every write the
// store is compiled into a dataplane.Plane and swapped in whole; a
// load balancer's provisioning and a target's drain end on the clock, so
// the plane is compiled again when the first of them is due.

// serveTraffic keeps dp on the store until ctx ends.
func (s *Server) serveTraffic(ctx context.Context, dp *dataplane.Server) {
	for {
		now := s.cloud.now()
		p, err := s.cloud.compilePlane(now, func(id string, err error) {
			s.log.Error("data plane: a load balancer left out", "load_balancer", id, "err", err)
		})
		if err != nil {
			s.log.Error("data plane: reading the store", "err", err)
		} else {
			_ = dp.Swap(p) // it logs what it cannot bind, and binds it on a later swap
			s.cloud.planeAt.Store(&now)
		}
		var due <-chan time.Time
		if p != nil && !p.Next.IsZero() {
			due = time.After(p.Next.Sub(now) + time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cloud.changed:
		case <-due:
		}
	}
}

// compilePlane is the store as the data plane serves it at now: every
// active load balancer. One that cannot be compiled (a certificate whose
// key does not load) is left out and told to skipped: the others still
// serve.
func (c *cloud) compilePlane(now time.Time, skipped func(id string, err error)) (*dataplane.Plane, error) {
	p := &dataplane.Plane{}
	err := c.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLBs).ForEach(func(k, v []byte) error {
			var rec lbRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("decoding load balancer %q: %w", k, err)
			}
			lb := rec.view(now)
			if lb.Status != exampleapi.LBStatusActive {
				if rec.AllocError == "" {
					due(p, rec.ReadyAt)
				}
				return nil
			}
			plb, err := compileLB(tx, p, lb, now)
			if err != nil {
				skipped(lb.ID, err)
				return nil
			}
			p.LoadBalancers = append(p.LoadBalancers, plb)
			return nil
		})
	})
	return p, err
}

// due makes t the plane's next change if it is the first.
func due(p *dataplane.Plane, t time.Time) {
	if p.Next.IsZero() || t.Before(p.Next) {
		p.Next = t
	}
}

// compileLB is active load balancer lb as the data plane serves it.
func compileLB(tx *bolt.Tx, p *dataplane.Plane, lb exampleapi.LoadBalancer, now time.Time) (dataplane.LoadBalancer, error) {
	out := dataplane.LoadBalancer{LoadBalancer: lb, Pools: map[string][]dataplane.Target{},
		Draining: map[string]bool{}, Certificates: map[string]*tls.Certificate{}}
	for _, a := range []string{lb.IPv4, lb.IPv6} {
		if addr, err := netip.ParseAddr(a); err == nil {
			out.Addrs = append(out.Addrs, addr)
		}
	}
	own, err := loadLBTargets(tx, lb.ID, now, nil)
	if err != nil {
		return out, err
	}
	for id, until := range own.draining {
		out.Draining[id] = true
		due(p, until)
	}
	if out.Own, err = instanceTargets(tx, own.serving()); err != nil {
		return out, err
	}
	if out.RuleSets, err = ruleSetsOf(tx, lb.ID); err != nil {
		return out, err
	}
	for _, r := range out.AllRules() {
		for _, b := range r.Backends {
			if _, done := out.Pools[b.TargetPoolID]; done {
				continue
			}
			tp, err := storedTargetPools.get(tx, b.TargetPoolID)
			if err != nil {
				return out, err
			}
			for _, d := range draining(tp.Draining, now) {
				out.Draining[d.ID] = true
				due(p, d.Until)
			}
			if out.Pools[tp.ID], err = poolTargets(tx, tp); err != nil {
				return out, err
			}
		}
	}
	for _, l := range lb.Listeners {
		for _, id := range l.CertificateIDs {
			if _, done := out.Certificates[id]; done {
				continue
			}
			rec, err := storedCertificates.get(tx, id)
			if err != nil {
				return out, err
			}
			kp, err := tls.X509KeyPair([]byte(rec.CertificatePEM), []byte(rec.PrivateKeyPEM))
			if err != nil {
				return out, fmt.Errorf("certificate %s: %w", id, err)
			}
			out.Certificates[id] = &kp
		}
	}
	return out, nil
}

// poolTargets are the targets of pool tp that answer: its running
// instances, or its ip targets a route reaches.
func poolTargets(tx *bolt.Tx, tp exampleapi.TargetPool) ([]dataplane.Target, error) {
	if tp.TargetTypeOrDefault() != exampleapi.TargetTypeIP {
		return instanceTargets(tx, tp.Targets)
	}
	routed, err := activeRoutes(tx, tp.Region)
	if err != nil {
		return nil, err
	}
	var out []dataplane.Target
	for _, t := range tp.Targets {
		if ap, err := exampleapi.ParseIPTarget(t); err == nil && routed.reach(ap.Addr()) {
			out = append(out, dataplane.Target{ID: t, Addr: ap.Addr(), Port: int(ap.Port())})
		}
	}
	return out, nil
}

// instanceTargets are the running instances of ids at their private
// addresses: those that answer.
func instanceTargets(tx *bolt.Tx, ids []string) ([]dataplane.Target, error) {
	var out []dataplane.Target
	for _, id := range ids {
		inst, ok, err := storedInstances.find(tx, id)
		if err != nil {
			return nil, err
		}
		if !ok || inst.State != exampleapi.InstanceRunning {
			continue
		}
		if addr, err := netip.ParseAddr(inst.PrivateIPv4); err == nil {
			out = append(out, dataplane.Target{ID: id, Addr: addr})
		}
	}
	return out, nil
}
