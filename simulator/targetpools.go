package simulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

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
	if tp.Draining == nil {
		tp.Draining = []exampleapi.DrainingTarget{}
	}
	tp.TargetType = tp.TargetTypeOrDefault()
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
	if err := requireNewName(tx, kindTargetPool, "a target pool", req.Region, req.Name); err != nil {
		return exampleapi.TargetPool{}, err
	}
	if err := requirePoolTargets(tx, req.TargetType, req.Targets, req.Region); err != nil {
		return exampleapi.TargetPool{}, err
	}
	now := c.now()
	tp := exampleapi.TargetPool{
		ObjectMeta: newMeta("tp-", req.Name, req.Region, now), TargetType: req.TargetType, Targets: slices.Clone(req.Targets),
		Tags: cloneTags(req.Tags), DeregistrationDelaySeconds: req.DeregistrationDelaySeconds, UpdatedAt: now,
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
	tp, err := viewObject(c, func(tx *bolt.Tx) (exampleapi.TargetPool, error) { return storedTargetPools.get(tx, id) })
	tp.Draining = draining(tp.Draining, c.now())
	tp.TargetType = tp.TargetTypeOrDefault()
	return tp, err
}

func (c *cloud) listTargetPools(region, name string, pg page) (exampleapi.ListResponse[exampleapi.TargetPool], error) {
	now := c.now()
	return listNamed(c, storedTargetPools, pg, region, name, func(tp *exampleapi.TargetPool) exampleapi.TargetPool {
		out := *tp
		out.Draining = draining(tp.Draining, now)
		out.TargetType = out.TargetTypeOrDefault()
		return out
	})
}

// draining is d without the targets whose delay ended by now.
func draining(d []exampleapi.DrainingTarget, now time.Time) []exampleapi.DrainingTarget {
	out := []exampleapi.DrainingTarget{}
	for _, t := range d {
		if now.Before(t.Until) {
			out = append(out, t)
		}
	}
	return out
}

// drain is the pool's draining targets after its targets become next:
// those removed drain for the pool's delay (from now), those put back stop
// draining, those whose delay ended are gone.
func drain(tp exampleapi.TargetPool, next []string, now time.Time) []exampleapi.DrainingTarget {
	out := slices.DeleteFunc(draining(tp.Draining, now), func(t exampleapi.DrainingTarget) bool { return slices.Contains(next, t.ID) })
	if tp.DeregistrationDelaySeconds == 0 {
		return out
	}
	until := now.Add(time.Duration(tp.DeregistrationDelaySeconds) * time.Second)
	for _, id := range tp.Targets {
		if !slices.Contains(next, id) && !slices.ContainsFunc(out, func(t exampleapi.DrainingTarget) bool { return t.ID == id }) {
			out = append(out, exampleapi.DrainingTarget{ID: id, Until: until})
		}
	}
	return out
}

// updateTargetPool replaces targets and tags; u must have passed
// validateUpdateTargetPool. The load balancers referencing the pool are
// not touched: they forward to whatever the pool holds.
func (c *cloud) updateTargetPool(id, ifMatch string, u exampleapi.UpdateTargetPoolRequest) (tp exampleapi.TargetPool, err error) {
	err = c.update(func(tx *bolt.Tx) error {
		if tp, err = storedTargetPools.getIfMatch(tx, id, ifMatch); err != nil {
			return err
		}
		if err := requirePoolTargets(tx, tp.TargetTypeOrDefault(), u.Targets, tp.Region); err != nil {
			return err
		}
		now := c.now()
		tp.DeregistrationDelaySeconds = u.DeregistrationDelaySeconds
		tp.Draining = drain(tp, u.Targets, now)
		tp.Targets, tp.Tags = slices.Clone(u.Targets), cloneTags(u.Tags)
		tp.Version++
		tp.UpdatedAt = now
		return putTargetPool(tx, &tp)
	})
	return tp, err
}

// deleteTargetPool deletes a pool that no load balancer references.
func (c *cloud) deleteTargetPool(id, ifMatch string) error {
	return deleteNamed(c, storedTargetPools, id, ifMatch, func(tx *bolt.Tx, _ *exampleapi.TargetPool) error {
		users, err := poolReferrers(tx, id)
		return unreferenced(users, err, "target pool %q is still referenced by %s; point them at another pool (or at targets) "+
			"or delete them first", id)
	})
}

// poolReferrers lists, in id order, the load balancers referencing pool
// id: as where they forward, or as a rule's backend, their own or one of
// their rule sets'.
func poolReferrers(tx *bolt.Tx, id string) ([]string, error) {
	lbs, err := lbReferrers(tx, func(ref *struct {
		TargetPoolID string `json:"target_pool_id"`
		Rules        []struct {
			Backends []struct {
				TargetPoolID string `json:"target_pool_id"`
			} `json:"backends"`
		} `json:"rules"`
	}) bool {
		for _, r := range ref.Rules {
			for _, b := range r.Backends {
				if b.TargetPoolID == id {
					return true
				}
			}
		}
		return ref.TargetPoolID == id
	})
	if err != nil {
		return nil, err
	}
	err = tx.Bucket(bucketRuleSets).ForEach(func(k, v []byte) error {
		var rs exampleapi.RuleSet
		if err := json.Unmarshal(v, &rs); err != nil {
			return fmt.Errorf("decoding rule set %q: %w", k, err)
		}
		if (exampleapi.LoadBalancerSettings{Rules: rs.Rules}).UsesPool(id) {
			lbs = append(lbs, rs.LoadBalancerID)
		}
		return nil
	})
	slices.Sort(lbs)
	return slices.Compact(lbs), err
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
