package simulator

import (
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Target pools: a set of instances that load balancers reference by id
// instead of listing targets, so one write re-targets all of them. (Not to
// be confused with the address pools of pools.go.)

const kindTargetPool = "target pool"

// maxReferrersNamed bounds how many load balancer ids a 409 on delete
// lists; a pool may be referenced by thousands.
const maxReferrersNamed = 10

func putTargetPool(tx *bolt.Tx, tp *exampleapi.TargetPool) error {
	if tp.Targets == nil {
		tp.Targets = []string{} // answered as [], never null
	}
	return putJSON(tx.Bucket(bucketTargetPools), tp.ID, tp)
}

// requireTargetPoolInRegion checks that a load balancer's target_pool_id
// names a pool of its region.
func requireTargetPoolInRegion(tx *bolt.Tx, id, region string) error {
	return storedTargetPools.requireInRegion(tx, "target_pool_id", id, region)
}

// createTargetPool creates a pool; req must have passed
// validateCreateTargetPool.
func (c *cloud) createTargetPool(tx *bolt.Tx, req exampleapi.CreateTargetPoolRequest) (exampleapi.TargetPool, error) {
	if err := requireRegion(tx, "region", req.Region); err != nil {
		return exampleapi.TargetPool{}, err
	}
	if id := lookupName(tx, kindTargetPool, req.Region, req.Name); id != "" {
		return exampleapi.TargetPool{}, conflict("a target pool named %q already exists in region %s (%s)", req.Name, req.Region, id)
	}
	if err := requireTargets(tx, req.Targets, req.Region); err != nil {
		return exampleapi.TargetPool{}, err
	}
	now := c.now()
	tp := exampleapi.TargetPool{
		ID: newID("tp-"), Name: req.Name, Region: req.Region, Targets: slices.Clone(req.Targets),
		Tags: cloneTags(req.Tags), CreatedAt: now, UpdatedAt: now, Version: 1,
	}
	if err := putTargetPool(tx, &tp); err != nil {
		return exampleapi.TargetPool{}, err
	}
	if err := putName(tx, kindTargetPool, tp.Region, tp.Name, tp.ID); err != nil {
		return exampleapi.TargetPool{}, err
	}
	return tp, nil
}

func (c *cloud) getTargetPool(id string) (exampleapi.TargetPool, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.TargetPool, error) { return storedTargetPools.get(tx, id) })
}

func (c *cloud) listTargetPools(region, name string, pg page) (exampleapi.ListResponse[exampleapi.TargetPool], error) {
	return listNamed(c, storedTargetPools, pg, region, name, func(tp *exampleapi.TargetPool) exampleapi.TargetPool { return *tp })
}

// updateTargetPool replaces targets and tags; u must have passed
// validateUpdateTargetPool. The load balancers referencing the pool are
// not touched: they forward to whatever the pool holds.
func (c *cloud) updateTargetPool(id, ifMatch string, u exampleapi.UpdateTargetPoolRequest) (tp exampleapi.TargetPool, err error) {
	err = c.update(func(tx *bolt.Tx) error {
		if tp, err = storedTargetPools.getIfMatch(tx, id, ifMatch); err != nil {
			return err
		}
		if err := requireTargets(tx, u.Targets, tp.Region); err != nil {
			return err
		}
		tp.Targets, tp.Tags = slices.Clone(u.Targets), cloneTags(u.Tags)
		tp.Version++
		tp.UpdatedAt = c.now()
		return putTargetPool(tx, &tp)
	})
	return tp, err
}

// deleteTargetPool deletes a pool that no load balancer references.
func (c *cloud) deleteTargetPool(id, ifMatch string) error {
	return c.update(func(tx *bolt.Tx) error {
		tp, err := storedTargetPools.getIfMatch(tx, id, ifMatch)
		if err != nil {
			return err
		}
		users, err := poolReferrers(tx, id)
		if err := unreferenced(users, err, "target pool %q is still referenced by %s; point them at another pool (or at targets) "+
			"or delete them first", id); err != nil {
			return err
		}
		if err := deleteName(tx, kindTargetPool, tp.Region, tp.Name); err != nil {
			return err
		}
		return storedTargetPools.drop(tx, id)
	})
}

// poolReferrers lists, in id order, the load balancers referencing pool
// id.
func poolReferrers(tx *bolt.Tx, id string) ([]string, error) {
	return lbReferrers(tx, func(ref *struct {
		TargetPoolID string `json:"target_pool_id"`
	}) bool {
		return ref.TargetPoolID == id
	})
}

// describeReferrers is e.g. "1 load balancer (lb-a)", or for more than
// maxReferrersNamed "12 load balancers (lb-a, ..., lb-j, and 2 more)".
func describeReferrers(ids []string) string {
	noun := "load balancers"
	if len(ids) == 1 {
		noun = "load balancer"
	}
	shown := ids[:min(len(ids), maxReferrersNamed)]
	list := strings.Join(shown, ", ")
	if more := len(ids) - len(shown); more > 0 {
		list += fmt.Sprintf(", and %d more", more)
	}
	return fmt.Sprintf("%d %s (%s)", len(ids), noun, list)
}

// deregisterPoolTarget removes a deleted instance from the region's target
// pools, as deregisterTarget does for load balancers.
func (c *cloud) deregisterPoolTarget(tx *bolt.Tx, region, instanceID string) error {
	return dropTarget(tx, bucketTargetPools, "target pool", c.now(), region, instanceID,
		func(p *exampleapi.TargetPool) targeting {
			return targeting{&p.Region, &p.Targets, &p.Version, &p.UpdatedAt}
		}, putTargetPool)
}
