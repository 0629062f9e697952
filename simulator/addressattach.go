package simulator

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// What attaching a reserved address does to load balancers. Attached, the
// address's IP is the load balancer's IPv4 (or IPv6) and the load
// balancer's own goes back to the pool; when the address leaves, the load
// balancer gets a new one. Both load balancers of a move change in the
// address's write transaction, so the address is never on two of them and
// never free in between; a refused move changes nothing (bbolt rolls the
// transaction back).

// attach moves a to the load balancer lbID ("" detaches it).
func (c *cloud) attach(tx *bolt.Tx, a *exampleapi.Address, lbID string, now time.Time) error {
	from := a.LoadBalancerID
	if lbID == from {
		return nil
	}
	// The new load balancer first: the address it gives back can then go
	// to the one the address leaves, when the pool has no other.
	if lbID != "" {
		to, err := attachable(tx, a, lbID)
		if err != nil {
			return err
		}
		if err := c.takeAddress(tx, &to, a, now); err != nil {
			return err
		}
	}
	if from != "" {
		if err := c.leaveAddress(tx, from, a, now); err != nil {
			return err
		}
	}
	a.LoadBalancerID = lbID
	return nil
}

// attachable reads the load balancer lbID for a to attach to, or says why
// it cannot take a.
func attachable(tx *bolt.Tx, a *exampleapi.Address, lbID string) (lbRecord, error) {
	rec, ok, err := storedLBs.find(tx, lbID)
	if err != nil {
		return rec, err
	}
	// 400, not 404: the address exists, a field of the body is wrong.
	if !ok {
		return rec, invalid("load_balancer_id", "load balancer %q does not exist", lbID)
	}
	switch other := rec.Attached[a.Family]; {
	case rec.Region != a.Region:
		return rec, invalid("load_balancer_id", "load balancer %s is in region %s, not %s (the address's)", lbID, rec.Region, a.Region)
	case rec.Internal:
		return rec, conflict("load balancer %s is internal: its address comes from its network, it takes no reserved address", lbID)
	case a.Family == exampleapi.AddressFamilyIPv6 && rec.IPFamily != exampleapi.IPFamilyDualStack:
		return rec, conflict("load balancer %s has ip_family %s: an ipv6 address attaches only to a dualstack load balancer", lbID, rec.IPFamily)
	case rec.AllocError != "":
		return rec, conflict("load balancer %s is in status error (%s): it takes no address; delete it", lbID, rec.AllocError)
	case other != "":
		return rec, conflict("load balancer %s already has the %s address %s attached: detach it first (at most one address per family)",
			lbID, a.Family, other)
	}
	return rec, nil
}

// takeAddress gives the load balancer rec a's IP in place of its own,
// which goes back to the pool.
func (c *cloud) takeAddress(tx *bolt.Tx, rec *lbRecord, a *exampleapi.Address, now time.Time) error {
	p := c.publicPool(a.Family)
	var own []allocation
	kept := rec.Allocations[:0:0]
	for _, al := range rec.Allocations {
		if al.Pool == p.name {
			own = append(own, al)
		} else {
			kept = append(kept, al)
		}
	}
	if err := release(tx, own); err != nil {
		return err
	}
	rec.Allocations = kept
	setFamilyIP(&rec.LoadBalancer, a.Family, a.IP)
	if rec.Attached == nil {
		rec.Attached = map[string]string{}
	}
	rec.Attached[a.Family] = a.ID
	rec.Version++
	rec.UpdatedAt = now
	return putLBRecord(tx, rec)
}

// leaveAddress takes a from the load balancer lbID, which gets a new
// address of a's family. A full pool puts the load balancer in status
// error, as at its creation: it keeps serving nothing until deleted.
func (c *cloud) leaveAddress(tx *bolt.Tx, lbID string, a *exampleapi.Address, now time.Time) error {
	rec, ok, err := storedLBs.find(tx, lbID)
	if err != nil || !ok {
		return err // gone: its deletion detached the address already
	}
	delete(rec.Attached, a.Family)
	p := c.publicPool(a.Family)
	ip, err := allocate(tx, p, rec.ID)
	var exhausted errPoolExhausted
	switch {
	case errors.As(err, &exhausted):
		setFamilyIP(&rec.LoadBalancer, a.Family, "")
		rec.AllocError = fmt.Sprintf("cannot allocate an address after %s left: %v", a.ID, exhausted)
	case err != nil:
		return err
	default:
		setFamilyIP(&rec.LoadBalancer, a.Family, ip.String())
		rec.Allocations = append(rec.Allocations, allocation{Pool: p.name, Addr: ip.String()})
	}
	rec.Version++
	rec.UpdatedAt = now
	return putLBRecord(tx, &rec)
}

// detachAll detaches the addresses of a load balancer being deleted; they
// stay reserved.
func (c *cloud) detachAll(tx *bolt.Tx, rec *lbRecord) error {
	now := c.now()
	for _, id := range rec.Attached {
		a, ok, err := storedAddresses.find(tx, id)
		if err != nil {
			return fmt.Errorf("detaching address %s from load balancer %s: %w", id, rec.ID, err)
		}
		if !ok {
			continue
		}
		a.LoadBalancerID = ""
		a.Version++
		a.UpdatedAt = now
		if err := putAddress(tx, &a); err != nil {
			return err
		}
	}
	return nil
}

// setFamilyIP sets the load balancer's address of family.
func setFamilyIP(lb *exampleapi.LoadBalancer, family, ip string) {
	if family == exampleapi.AddressFamilyIPv6 {
		lb.IPv6 = ip
	} else {
		lb.IPv4 = ip
	}
}
