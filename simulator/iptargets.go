package simulator

import (
	"encoding/json"
	"fmt"
	"net/netip"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Target pools of target type ip: their targets are IP:port pairs, such
// as pods', that the load balancer reaches directly. The cloud routes to
// an IP only if a network of the region has an active route whose
// destination holds it (the pod CIDRs a cluster's route controller
// applies: what "VPC-native" means here), so it refuses any other IP,
// and a target whose route went stops taking traffic.

// requirePoolTargets checks targets against a pool of type typ in region:
// instances of the region, or IP:port pairs its routes reach.
func requirePoolTargets(tx *bolt.Tx, typ string, targets []string, region string) error {
	if typ != exampleapi.TargetTypeIP {
		return requireTargets(tx, targets, region)
	}
	routed, err := activeRoutes(tx, region)
	if err != nil {
		return err
	}
	for i, t := range targets {
		field := fmt.Sprintf("targets[%d]", i)
		ap, err := exampleapi.ParseIPTarget(t)
		if err != nil {
			return invalid(field, "%v", err)
		}
		if !routed.reach(ap.Addr()) {
			return invalid(field, "%s is outside every route of region %s's networks: the cloud reaches only IPs a route "+
				"sends to an instance (a node's pod CIDR); routes: %s", ap.Addr(), region, routed)
		}
	}
	return nil
}

// routes are the destinations of a region's active routes.
type routes []netip.Prefix

// activeRoutes are the destinations of the routes of region's networks
// whose target instance exists.
func activeRoutes(tx *bolt.Tx, region string) (routes, error) {
	nets := map[string]bool{}
	err := tx.Bucket(bucketNetworks).ForEach(func(k, v []byte) error {
		var n exampleapi.Network
		if err := json.Unmarshal(v, &n); err != nil {
			return fmt.Errorf("decoding network %q: %w", k, err)
		}
		nets[n.ID] = n.Region == region
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out routes
	err = tx.Bucket(bucketRoutes).ForEach(func(k, v []byte) error {
		var r exampleapi.Route
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decoding route %q: %w", k, err)
		}
		if !nets[r.NetworkID] || routeView(tx, r).Status != exampleapi.RouteStatusActive {
			return nil
		}
		if p, err := netip.ParsePrefix(r.DestinationCIDR); err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func (rs routes) reach(ip netip.Addr) bool {
	for _, p := range rs {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func (rs routes) String() string {
	if len(rs) == 0 {
		return "none"
	}
	const most = 8
	s := ""
	for i, p := range rs {
		if i == most {
			return s + fmt.Sprintf(" and %d more", len(rs)-most)
		}
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}

// requireBackendPools checks what rule backends need of their pools: a
// pool of the region; an instance pool on a port of its targets, an ip
// pool on port 0 (its targets carry theirs).
func requireBackendPools(tx *bolt.Tx, rules []exampleapi.Rule, region string) error {
	for i, r := range rules {
		for k, b := range r.Backends {
			f := fmt.Sprintf("rules[%d].backends[%d]", i, k)
			if err := storedTargetPools.requireInRegion(tx, f+".target_pool_id", b.TargetPoolID, region); err != nil {
				return err
			}
			tp, err := storedTargetPools.get(tx, b.TargetPoolID)
			if err != nil {
				return err
			}
			switch ip := tp.TargetTypeOrDefault() == exampleapi.TargetTypeIP; {
			case ip && b.Port != 0:
				return invalid(f+".port", "must be 0: target pool %s is of target type ip, its targets carry their ports", tp.ID)
			case !ip && b.Port == 0:
				return invalid(f+".port", "must be 1-65535: target pool %s holds instances, reached on this port", tp.ID)
			}
		}
	}
	return nil
}

// requireInstancePool checks that a load balancer's own target_pool_id
// names an instance pool: its listeners' target ports are the targets'
// ports, which an ip pool's targets carry themselves.
func requireInstancePool(tx *bolt.Tx, id string) error {
	tp, err := storedTargetPools.get(tx, id)
	if err != nil {
		return err
	}
	if tp.TargetTypeOrDefault() == exampleapi.TargetTypeIP {
		return invalid("target_pool_id", "target pool %s is of target type ip: reference it from a rule's backends (port 0)", id)
	}
	return nil
}
