package simulator

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	bolt "go.etcd.io/bbolt"
)

// What the kinds of stored objects share: a bucket of JSON records by id,
// read, deleted and referenced alike.

// objectKind is one kind of stored object: JSON records R by id in
// bucket, each an API object (its id, name, region and version).
type objectKind[R exampleapi.Object] struct {
	kind   string // in messages, e.g. "target pool"
	bucket []byte
}

var (
	storedInstances    = objectKind[instanceRecord]{kind: kindInstance, bucket: bucketInstances}
	storedNetworks     = objectKind[exampleapi.Network]{kind: kindNetwork, bucket: bucketNetworks}
	storedLBs          = objectKind[lbRecord]{kind: kindLoadBalancer, bucket: bucketLBs}
	storedTargetPools  = objectKind[exampleapi.TargetPool]{kind: kindTargetPool, bucket: bucketTargetPools}
	storedCertificates = objectKind[certRecord]{kind: kindCertificate, bucket: bucketCertificates}
	storedAddresses    = objectKind[addressRecord]{kind: kindAddress, bucket: bucketAddresses}
)

// newMeta is the metadata of an object created at now: a new id of
// prefix, at version 1.
func newMeta(prefix, name, region string, now time.Time) exampleapi.ObjectMeta {
	return exampleapi.ObjectMeta{ID: newID(prefix), Name: name, Region: region, CreatedAt: now, Version: 1}
}

// get reads the record id; a missing one is not found.
func (k objectKind[R]) get(tx *bolt.Tx, id string) (R, error) {
	rec, ok, err := k.find(tx, id)
	if err == nil && !ok {
		err = notFound(k.kind, id)
	}
	return rec, err
}

// find reads the record id; ok is false when there is none.
func (k objectKind[R]) find(tx *bolt.Tx, id string) (rec R, ok bool, err error) {
	ok, err = getJSON(tx.Bucket(k.bucket), id, &rec)
	return rec, ok, err
}

// getIfMatch reads the record id for a change, which the request's
// If-Match header (ifMatch) must allow.
func (k objectKind[R]) getIfMatch(tx *bolt.Tx, id, ifMatch string) (R, error) {
	rec, err := k.get(tx, id)
	if err != nil {
		return rec, err
	}
	return rec, checkIfMatch(ifMatch, rec.Meta().Version)
}

// drop deletes the record id.
func (k objectKind[R]) drop(tx *bolt.Tx, id string) error {
	return dropObject(tx, k.bucket, k.kind, id)
}

// deleteNamed deletes the object id of kind k, a named one, under the
// If-Match header (ifMatch) in one write transaction: first before (its
// refusals, what it frees), then its name and record.
func deleteNamed[R exampleapi.Object](c *cloud, k objectKind[R], id, ifMatch string, before func(tx *bolt.Tx, rec *R) error) error {
	return c.update(func(tx *bolt.Tx) error {
		rec, err := k.getIfMatch(tx, id, ifMatch)
		if err != nil {
			return err
		}
		if err := before(tx, &rec); err != nil {
			return err
		}
		if err := deleteName(tx, k.kind, rec.Meta().Region, rec.Meta().Name); err != nil {
			return err
		}
		return k.drop(tx, id)
	})
}

// dropObject deletes the record id of kind from bucket.
func dropObject(tx *bolt.Tx, bucket []byte, kind, id string) error {
	if err := tx.Bucket(bucket).Delete([]byte(id)); err != nil {
		return fmt.Errorf("deleting %s %s: %w", kind, id, err)
	}
	return nil
}

// requireInRegion checks that the request's field names, with id, an
// object of this kind of region.
func (k objectKind[R]) requireInRegion(tx *bolt.Tx, field, id, region string) error {
	var rec R
	ok, err := getJSON(tx.Bucket(k.bucket), id, &rec)
	switch {
	case err != nil:
		return err
	case !ok:
		return invalid(field, "%s %q does not exist", k.kind, id)
	case rec.Meta().Region != region:
		return invalid(field, "%s %q is in region %s, not %s", k.kind, id, rec.Meta().Region, region)
	}
	return nil
}

// viewObject reads one object in a read transaction.
func viewObject[T any](c *cloud, read func(tx *bolt.Tx) (T, error)) (obj T, err error) {
	err = c.view(func(tx *bolt.Tx) error {
		obj, err = read(tx)
		return err
	})
	return obj, err
}

// unreferenced refuses to delete the object id while load balancers use
// it: users is what a referrers scan found, err how it failed. The
// conflict says format with the id and the users (describeReferrers).
func unreferenced(users []string, err error, format, id string) error {
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return conflict(format, id, describeReferrers(users))
	}
	return nil
}

// lbReferrers lists, in id order, the load balancers that use an object:
// uses is asked about each one's stored record, decoded as Ref (the part
// that refers to objects). Deletes are rare, so a scan beats keeping a
// reverse index in step.
func lbReferrers[Ref any](tx *bolt.Tx, uses func(*Ref) bool) ([]string, error) {
	var users []string
	err := tx.Bucket(bucketLBs).ForEach(func(k, v []byte) error {
		var ref Ref
		if err := json.Unmarshal(v, &ref); err != nil {
			return fmt.Errorf("decoding load balancer %q: %w", k, err)
		}
		if uses(&ref) {
			users = append(users, string(k))
		}
		return nil
	})
	return users, err
}

// listNamed pages through the records of kind k, answered as view makes
// them, keeping those of region and of name (each when not empty).
func listNamed[R exampleapi.Object, T any](c *cloud, k objectKind[R], pg page, region, name string, view func(*R) T) (exampleapi.ListResponse[T], error) {
	return listWhere(c, k, pg, func(*R) bool { return true }, region, name, view)
}

// listWhere is listNamed keeping, of those, the records keep accepts.
func listWhere[R exampleapi.Object, T any](c *cloud, k objectKind[R], pg page, keep func(*R) bool, region, name string,
	view func(*R) T) (resp exampleapi.ListResponse[T], err error) {
	err = c.view(func(tx *bolt.Tx) error {
		resp, err = listBucket(tx.Bucket(k.bucket), pg, func(key, v []byte) (T, bool, error) {
			var rec R
			if err := json.Unmarshal(v, &rec); err != nil {
				var zero T
				return zero, false, fmt.Errorf("decoding %s %q: %w", k.kind, key, err)
			}
			m := rec.Meta()
			ok := (region == "" || m.Region == region) && (name == "" || m.Name == name) && keep(&rec)
			return view(&rec), ok, nil
		})
		return err
	})
	return resp, err
}
