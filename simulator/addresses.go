package simulator

import (
	"errors"
	"net/netip"
	"net/url"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Reserved addresses: an IP taken from the public pool of its family at
// creation and given back only at deletion, attached to at most one load
// balancer at a time (addressattach.go).

const kindAddress = "address"

// addressRecord is an address as stored.
type addressRecord struct {
	exampleapi.Address
	// Allocation is where IP came from, given back on delete.
	Allocation allocation `json:"allocation"`
}

func putAddress(tx *bolt.Tx, rec *addressRecord) error {
	return putJSON(tx.Bucket(bucketAddresses), rec.ID, rec)
}

// createAddress reserves an address, attached at once when the request
// names a load balancer; req must have passed validateCreateAddress.
func (c *cloud) createAddress(tx *bolt.Tx, req exampleapi.CreateAddressRequest) (exampleapi.Address, error) {
	if err := requireNewName(tx, kindAddress, "an address", req.Region, req.Name); err != nil {
		return exampleapi.Address{}, err
	}
	now := c.now()
	rec := addressRecord{Address: exampleapi.Address{
		ObjectMeta: newMeta("addr-", req.Name, req.Region, now), Family: req.Family,
		Tags: cloneTags(req.Tags), UpdatedAt: now,
	}}
	p := c.publicPool(req.Family)
	ip, err := allocate(tx, p, rec.ID)
	var exhausted errPoolExhausted
	if errors.As(err, &exhausted) {
		// Unlike a load balancer's, an address without an IP is nothing:
		// refused, not created in status error.
		return exampleapi.Address{}, conflict("cannot reserve an address: %v", exhausted)
	}
	if err != nil {
		return exampleapi.Address{}, err
	}
	rec.IP = ip.String()
	rec.Allocation = allocation{Pool: p.name, Addr: rec.IP}
	if err := c.attach(tx, &rec.Address, req.LoadBalancerID, now); err != nil {
		return exampleapi.Address{}, err
	}
	if err := putAddress(tx, &rec); err != nil {
		return exampleapi.Address{}, err
	}
	if err := putName(tx, kindAddress, rec.Region, rec.Name, rec.ID); err != nil {
		return exampleapi.Address{}, err
	}
	return rec.Address, nil
}

func (c *cloud) getAddress(id string) (exampleapi.Address, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.Address, error) {
		rec, err := storedAddresses.get(tx, id)
		return rec.Address, err
	})
}

// listAddresses answers ?region=&name=&ip=: the IP in any notation of it,
// so a lookup by the IP a user wrote finds the address.
func (c *cloud) listAddresses(q url.Values, pg page) (exampleapi.ListResponse[exampleapi.Address], error) {
	keep := func(*addressRecord) bool { return true }
	if s := q.Get("ip"); s != "" {
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			return exampleapi.ListResponse[exampleapi.Address]{}, invalid("ip", "%q is not an IP address", s)
		}
		want := ip.Unmap().String()
		keep = func(rec *addressRecord) bool { return rec.IP == want }
	}
	return listWhere(c, storedAddresses, pg, keep, q.Get("region"), q.Get("name"),
		func(rec *addressRecord) exampleapi.Address { return rec.Address })
}

// updateAddress attaches, moves or detaches the address and replaces its
// tags, in one write transaction; u must have passed
// validateUpdateAddress.
func (c *cloud) updateAddress(id, ifMatch string, u exampleapi.UpdateAddressRequest) (a exampleapi.Address, err error) {
	err = c.update(func(tx *bolt.Tx) error {
		rec, err := storedAddresses.getIfMatch(tx, id, ifMatch)
		if err != nil {
			return err
		}
		now := c.now()
		if err := c.attach(tx, &rec.Address, u.LoadBalancerID, now); err != nil {
			return err
		}
		rec.Tags = cloneTags(u.Tags)
		rec.Version++
		rec.UpdatedAt = now
		a = rec.Address
		return putAddress(tx, &rec)
	})
	return a, err
}

// deleteAddress gives the IP back to its pool. An attached address is
// refused: deleting it would take the IP from under its load balancer.
func (c *cloud) deleteAddress(id, ifMatch string) error {
	return deleteNamed(c, storedAddresses, id, ifMatch, func(tx *bolt.Tx, rec *addressRecord) error {
		if rec.LoadBalancerID != "" {
			return conflict("address %q is attached to %s: detach it first (PUT load_balancer_id \"\")", id, rec.LoadBalancerID)
		}
		return release(tx, []allocation{rec.Allocation})
	})
}
