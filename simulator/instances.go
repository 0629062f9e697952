package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

const kindInstance = "instance"

// instanceRecord is an instance as stored: the wire object plus the pools
// its addresses came from.
type instanceRecord struct {
	exampleapi.Instance
	Allocations []allocation `json:"allocations,omitempty"`
}

func putInstanceRecord(tx *bolt.Tx, rec *instanceRecord) error {
	return putJSON(tx.Bucket(bucketInstances), rec.ID, rec)
}

// createInstance creates an instance; req must have passed
// validateCreateInstance.
func (c *cloud) createInstance(tx *bolt.Tx, req exampleapi.CreateInstanceRequest) (exampleapi.Instance, error) {
	region, err := zoneRegion(tx, "zone", req.Zone)
	if err != nil {
		return exampleapi.Instance{}, err
	}
	if err := requireFreeName(tx, kindInstance, "an instance", region, req.Name); err != nil {
		return exampleapi.Instance{}, err
	}
	rec := instanceRecord{Instance: exampleapi.Instance{
		ObjectMeta: newMeta("i-", req.Name, region, c.now()), Type: req.Type, Zone: req.Zone,
		State: req.State, Tags: cloneTags(req.Tags),
	}}
	if err := c.assignInstanceAddresses(tx, &rec, req); err != nil {
		return exampleapi.Instance{}, err
	}
	if err := putInstanceRecord(tx, &rec); err != nil {
		return exampleapi.Instance{}, err
	}
	if err := putName(tx, kindInstance, region, rec.Name, rec.ID); err != nil {
		return exampleapi.Instance{}, err
	}
	return rec.Instance, nil
}

// assignInstanceAddresses reserves the addresses the caller chose and
// allocates the others: private from the region's first network (else
// 10.0.0.0/16), public from 198.51.100.0/24 and IPv6 from the network's IPv6
// CIDR. Only the private address is mandatory; a public or IPv6 pool that is
// full leaves that address empty, as those fields are optional.
func (c *cloud) assignInstanceAddresses(tx *bolt.Tx, rec *instanceRecord, req exampleapi.CreateInstanceRequest) error {
	network, hasNetwork, err := firstNetwork(tx, rec.Region)
	if err != nil {
		return err
	}
	privPool := prefixPool("region/"+rec.Region+"/private-v4", defaultPrivatePrefix)
	if hasNetwork {
		privPool = networkPoolV4(network)
	}
	var v6Pool *pool
	if hasNetwork && network.IPv6CIDR != "" {
		p := networkPoolV6(network)
		v6Pool = &p
	}
	assign := func(field, given string, p *pool, mandatory bool) (string, error) {
		if given != "" {
			a := netip.MustParseAddr(given) // validated before
			if p == nil {
				return a.String(), nil
			}
			tracked, err := reserve(tx, *p, a, rec.ID)
			if err != nil {
				return "", err
			}
			if tracked {
				rec.Allocations = append(rec.Allocations, allocation{Pool: p.name, Addr: a.String()})
			}
			return a.String(), nil
		}
		if p == nil {
			return "", nil
		}
		a, err := allocate(tx, *p, rec.ID)
		var exhausted errPoolExhausted
		switch {
		case errors.As(err, &exhausted) && !mandatory:
			return "", nil
		case errors.As(err, &exhausted):
			return "", conflict("cannot allocate %s: %v", field, err)
		case err != nil:
			return "", err
		}
		rec.Allocations = append(rec.Allocations, allocation{Pool: p.name, Addr: a.String()})
		return a.String(), nil
	}
	pubPool := prefixPool("instance-public-v4", instancePublicPrefix)
	if rec.PrivateIPv4, err = assign("private_ipv4", req.PrivateIPv4, &privPool, true); err != nil {
		return err
	}
	if rec.PublicIPv4, err = assign("public_ipv4", req.PublicIPv4, &pubPool, false); err != nil {
		return err
	}
	if rec.IPv6, err = assign("ipv6", req.IPv6, v6Pool, false); err != nil {
		return err
	}
	return nil
}

func (c *cloud) getInstance(id string) (exampleapi.Instance, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.Instance, error) {
		rec, err := storedInstances.get(tx, id)
		return rec.Instance, err
	})
}

// instanceByName finds an instance by name, in one region or in all of
// them; a name that exists in several regions is ambiguous (409).
func (c *cloud) instanceByName(name, region string) (inst exampleapi.Instance, err error) {
	err = c.view(func(tx *bolt.Tx) error {
		var regions []string
		if region != "" {
			regions = []string{region}
		} else {
			all, err := allRegions(tx)
			if err != nil {
				return err
			}
			for _, r := range all {
				regions = append(regions, r.Name)
			}
		}
		var found []string
		for _, r := range regions {
			if id := lookupName(tx, kindInstance, r, name); id != "" {
				found = append(found, id)
			}
		}
		switch len(found) {
		case 0:
			return notFound(kindInstance, name)
		case 1:
			rec, err := storedInstances.get(tx, found[0])
			inst = rec.Instance
			return err
		default:
			return conflict("instance name %q is ambiguous: it exists in several regions (%v); pass ?region=", name, found)
		}
	})
	return inst, err
}

// instanceFilter holds the parsed filters of an instance listing; tags maps
// a key to its wanted value, or to nil for "key present".
type instanceFilter struct {
	name, zone, region string
	tags               map[string]*string
}

func (f instanceFilter) match(inst *exampleapi.Instance) bool {
	if (f.name != "" && inst.Name != f.name) || (f.zone != "" && inst.Zone != f.zone) ||
		(f.region != "" && inst.Region != f.region) {
		return false
	}
	for k, want := range f.tags {
		got, ok := inst.Tags[k]
		if !ok || (want != nil && got != *want) {
			return false
		}
	}
	return true
}

func (c *cloud) listInstances(f instanceFilter, pg page) (resp exampleapi.ListResponse[exampleapi.Instance], err error) {
	err = c.view(func(tx *bolt.Tx) error {
		resp, err = listBucket(tx.Bucket(bucketInstances), pg, func(k, v []byte) (exampleapi.Instance, bool, error) {
			var rec instanceRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return rec.Instance, false, fmt.Errorf("decoding instance %q: %w", k, err)
			}
			return rec.Instance, f.match(&rec.Instance), nil
		})
		return err
	})
	return resp, err
}

// modifyInstance applies change to an instance under If-Match and bumps
// its version.
func (c *cloud) modifyInstance(id, ifMatch string, change func(*instanceRecord)) (inst exampleapi.Instance, err error) {
	err = c.update(func(tx *bolt.Tx) error {
		rec, err := storedInstances.getIfMatch(tx, id, ifMatch)
		if err != nil {
			return err
		}
		change(&rec)
		rec.Version++
		inst = rec.Instance
		return putInstanceRecord(tx, &rec)
	})
	return inst, err
}

func (c *cloud) setInstanceTags(id, ifMatch string, tags map[string]string) (exampleapi.Instance, error) {
	if err := validateTags("tags", tags); err != nil {
		return exampleapi.Instance{}, err
	}
	return c.modifyInstance(id, ifMatch, func(rec *instanceRecord) { rec.Tags = cloneTags(tags) })
}

func (c *cloud) setInstanceState(id, ifMatch, state string) (exampleapi.Instance, error) {
	if err := oneOf("state", "state", state, exampleapi.InstanceStates); err != nil {
		return exampleapi.Instance{}, err
	}
	return c.modifyInstance(id, ifMatch, func(rec *instanceRecord) { rec.State = state })
}

// deleteInstance deletes an instance and gives its addresses back. Like a
// real cloud it deregisters the instance from load balancers and target
// pools; routes that point at it stay and become blackholes.
func (c *cloud) deleteInstance(id, ifMatch string) error {
	return deleteNamed(c, storedInstances, id, ifMatch, func(tx *bolt.Tx, rec *instanceRecord) error {
		if err := release(tx, rec.Allocations); err != nil {
			return err
		}
		if err := c.deregisterTarget(tx, rec.Region, id); err != nil {
			return err
		}
		return c.deregisterPoolTarget(tx, rec.Region, id)
	})
}

func cloneTags(tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	return maps.Clone(tags)
}

// instanceMetadata is the metadata API's view of an instance. The hostname
// is the instance name, which is what a kubelet registers as its node name.
func instanceMetadata(inst exampleapi.Instance) exampleapi.InstanceMetadata {
	return exampleapi.InstanceMetadata{
		ID: inst.ID, Name: inst.Name, Type: inst.Type, Region: inst.Region, Zone: inst.Zone,
		State: inst.State, PrivateIPv4: inst.PrivateIPv4, PublicIPv4: inst.PublicIPv4, IPv6: inst.IPv6,
		Hostname: inst.Name, Tags: inst.Tags,
	}
}

// requireInstanceInRegion checks that id names an instance of region.
func requireInstanceInRegion(tx *bolt.Tx, field, id, region string) error {
	return storedInstances.requireInRegion(tx, field, id, region)
}
