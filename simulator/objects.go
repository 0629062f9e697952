package simulator

import (
	"encoding/json"
	"fmt"

	"github.com/example/cloud-provider-example/exampleapi"
	bolt "go.etcd.io/bbolt"
)

// What the kinds of stored objects share: a bucket of JSON records by id,
// read, deleted and referenced alike.

// getObject reads the record id of kind (e.g. "target pool") from bucket;
// a missing one is not found.
func getObject[R any](tx *bolt.Tx, bucket []byte, kind, id string) (R, error) {
	var rec R
	ok, err := getJSON(tx.Bucket(bucket), id, &rec)
	if err == nil && !ok {
		err = notFound(kind, id)
	}
	return rec, err
}

// dropObject deletes the record id of kind from bucket.
func dropObject(tx *bolt.Tx, bucket []byte, kind, id string) error {
	if err := tx.Bucket(bucket).Delete([]byte(id)); err != nil {
		return fmt.Errorf("deleting %s %s: %w", kind, id, err)
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

// requireInRegion checks that the request's field names, with id, an
// object of kind of region; regionOf reads a record's region.
func requireInRegion[R any](tx *bolt.Tx, bucket []byte, kind, field, id, region string, regionOf func(*R) string) error {
	var rec R
	ok, err := getJSON(tx.Bucket(bucket), id, &rec)
	switch {
	case err != nil:
		return err
	case !ok:
		return invalid(field, "%s %q does not exist", kind, id)
	case regionOf(&rec) != region:
		return invalid(field, "%s %q is in region %s, not %s", kind, id, regionOf(&rec), region)
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

// listNamed pages through the records R of kind in bucket, answered as
// view makes them, keeping those of region and of name (each when not
// empty); where reads a record's region and name.
func listNamed[R, T any](c *cloud, bucket []byte, kind string, pg page, region, name string,
	where func(*R) (string, string), view func(*R) T) (resp exampleapi.ListResponse[T], err error) {
	err = c.view(func(tx *bolt.Tx) error {
		resp, err = listBucket(tx.Bucket(bucket), pg, func(k, v []byte) (T, bool, error) {
			var rec R
			if err := json.Unmarshal(v, &rec); err != nil {
				var zero T
				return zero, false, fmt.Errorf("decoding %s %q: %w", kind, k, err)
			}
			r, n := where(&rec)
			return view(&rec), (region == "" || r == region) && (name == "" || n == name), nil
		})
		return err
	})
	return resp, err
}
