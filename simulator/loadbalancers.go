package simulator

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

const kindLoadBalancer = "load balancer"

// lbRecord is a load balancer as stored. Its status is not stored: it is
// computed on read from ReadyAt and AllocError, so provisioning survives a
// restart and needs no timers.
type lbRecord struct {
	exampleapi.LoadBalancer
	ReadyAt time.Time `json:"ready_at"`
	// Allocations are the addresses the load balancer took from the
	// pools itself: not those of the reserved addresses attached to it.
	Allocations []allocation `json:"allocations,omitempty"`
	// AllocError is set when an address pool was exhausted at creation
	// (or when an address that left could not be replaced).
	AllocError string `json:"alloc_error,omitempty"`
	// Attached are the reserved addresses attached to the load balancer,
	// by family (addressattach.go): at most one of each.
	Attached map[string]string `json:"attached_addresses,omitempty"`
}

// view is the wire object at time now. Like many clouds, the addresses and
// hostname are only shown once the load balancer is active.
func (r *lbRecord) view(now time.Time) exampleapi.LoadBalancer {
	lb := r.LoadBalancer
	switch {
	case r.AllocError != "":
		lb.Status, lb.StatusMessage = exampleapi.LBStatusError, r.AllocError
		lb.IPv4, lb.IPv6, lb.Hostname = "", "", ""
	case now.Before(r.ReadyAt):
		lb.Status, lb.StatusMessage = exampleapi.LBStatusProvisioning, ""
		lb.IPv4, lb.IPv6, lb.Hostname = "", "", ""
	default:
		lb.Status, lb.StatusMessage = exampleapi.LBStatusActive, ""
	}
	return lb
}

func putLBRecord(tx *bolt.Tx, rec *lbRecord) error {
	return putJSON(tx.Bucket(bucketLBs), rec.ID, rec)
}

// requireTargets checks that every target is an instance of region.
func requireTargets(tx *bolt.Tx, targets []string, region string) error {
	for i, id := range targets {
		if err := requireInstanceInRegion(tx, fmt.Sprintf("targets[%d]", i), id, region); err != nil {
			return err
		}
	}
	return nil
}

// requireLBTargets checks where a load balancer forwards to: its targets,
// or the target pool it references (validation made them exclusive).
func requireLBTargets(tx *bolt.Tx, targets []string, poolID, region string) error {
	if poolID != "" {
		if err := requireTargetPoolInRegion(tx, poolID, region); err != nil {
			return err
		}
		return requireInstancePool(tx, poolID)
	}
	return requireTargets(tx, targets, region)
}

// createLoadBalancer creates a load balancer in status provisioning; spec
// must have passed validateCreateLoadBalancer.
func (c *cloud) createLoadBalancer(tx *bolt.Tx, spec exampleapi.LoadBalancerSpec) (exampleapi.LoadBalancer, error) {
	if err := requireNewName(tx, kindLoadBalancer, "a load balancer", spec.Region, spec.Name); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	if err := requireLBTargets(tx, spec.Targets, spec.TargetPoolID, spec.Region); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	if err := requireListenerCertificates(tx, spec.Listeners, spec.Region); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	if err := requireBackendPools(tx, spec.Rules, spec.Region); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	now := c.now()
	spec.Tags = cloneTags(spec.Tags)
	rec := lbRecord{
		LoadBalancer: exampleapi.LoadBalancer{
			LoadBalancerSpec: spec, ID: newID("lb-"), CreatedAt: now, UpdatedAt: now, Version: 1,
		},
		ReadyAt: now.Add(c.provisionDelay()),
	}
	rec.Hostname = fmt.Sprintf("%s.%s.lb.example.com", rec.ID, rec.Region)
	if err := c.allocateLBAddresses(tx, &rec); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	if err := putLBRecord(tx, &rec); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	if err := putName(tx, kindLoadBalancer, rec.Region, rec.Name, rec.ID); err != nil {
		return exampleapi.LoadBalancer{}, err
	}
	return rec.view(c.lbNow()), nil
}

// allocateLBAddresses takes the IPv4 (public or internal pool) and, for
// dualstack, the IPv6 address. An exhausted pool does not fail the request:
// the load balancer exists in status error, as in a real cloud.
func (c *cloud) allocateLBAddresses(tx *bolt.Tx, rec *lbRecord) error {
	pools := []pool{c.publicPool(exampleapi.AddressFamilyIPv4)}
	if rec.Internal {
		pools[0] = prefixPool("lb-internal-v4", lbInternalPrefix)
	}
	if rec.IPFamily == exampleapi.IPFamilyDualStack {
		pools = append(pools, c.publicPool(exampleapi.AddressFamilyIPv6))
	}
	for _, p := range pools {
		a, err := allocate(tx, p, rec.ID)
		var exhausted errPoolExhausted
		if errors.As(err, &exhausted) {
			// Give back what this load balancer already took.
			if err := release(tx, rec.Allocations); err != nil {
				return err
			}
			rec.Allocations, rec.IPv4, rec.IPv6 = nil, "", ""
			rec.AllocError = fmt.Sprintf("cannot allocate an address: %v", exhausted)
			return nil
		}
		if err != nil {
			return err
		}
		rec.Allocations = append(rec.Allocations, allocation{Pool: p.name, Addr: a.String()})
		if a.Is4() {
			rec.IPv4 = a.String()
		} else {
			rec.IPv6 = a.String()
		}
	}
	return nil
}

func (c *cloud) getLoadBalancer(id string) (exampleapi.LoadBalancer, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.LoadBalancer, error) {
		rec, err := storedLBs.get(tx, id)
		return rec.view(c.lbNow()), err
	})
}

func (c *cloud) listLoadBalancers(region, name string, pg page) (exampleapi.ListResponse[exampleapi.LoadBalancer], error) {
	now := c.lbNow()
	return listNamed(c, storedLBs, pg, region, name, func(r *lbRecord) exampleapi.LoadBalancer { return r.view(now) })
}

// updateLoadBalancer replaces the mutable fields; u must have passed
// validateLoadBalancerMutable.
func (c *cloud) updateLoadBalancer(id, ifMatch string, u exampleapi.UpdateLoadBalancerRequest) (lb exampleapi.LoadBalancer, err error) {
	err = c.update(func(tx *bolt.Tx) error {
		rec, err := storedLBs.getIfMatch(tx, id, ifMatch)
		if err != nil {
			return err
		}
		if err := requireLBTargets(tx, u.Targets, u.TargetPoolID, rec.Region); err != nil {
			return err
		}
		if err := requireListenerCertificates(tx, u.Listeners, rec.Region); err != nil {
			return err
		}
		if err := requireBackendPools(tx, u.Rules, rec.Region); err != nil {
			return err
		}
		if err := requireSetsBudget(tx, id, u); err != nil {
			return err
		}
		u.Tags = cloneTags(u.Tags)
		rec.LoadBalancerSettings = u
		rec.Version++
		rec.UpdatedAt = c.now()
		lb = rec.view(rec.UpdatedAt)
		return putLBRecord(tx, &rec)
	})
	return lb, err
}

// deleteLoadBalancer deletes a load balancer without rule sets; the
// reserved addresses attached to it stay, detached.
func (c *cloud) deleteLoadBalancer(id, ifMatch string) error {
	return deleteNamed(c, storedLBs, id, ifMatch, func(tx *bolt.Tx, rec *lbRecord) error {
		if err := requireNoRuleSets(tx, id); err != nil {
			return err
		}
		if err := dropTraffic(tx, id); err != nil {
			return err
		}
		if err := c.detachAll(tx, rec); err != nil {
			return err
		}
		return release(tx, rec.Allocations)
	})
}

// deregisterTarget removes a deleted instance from the targets of the
// region's load balancers.
func (c *cloud) deregisterTarget(tx *bolt.Tx, region, instanceID string) error {
	return dropTarget(tx, bucketLBs, "load balancer", c.now(), region, instanceID,
		func(r *lbRecord) targeting { return targeting{&r.Region, &r.Targets, &r.Version, &r.UpdatedAt} }, putLBRecord)
}
