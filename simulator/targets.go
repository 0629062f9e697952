package simulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// targeting points at the fields of a stored object that sends traffic to
// instances (a load balancer, a target pool).
type targeting struct {
	region  *string
	targets *[]string
	version *int64
	updated *time.Time
}

// dropTarget removes a deleted instance from the targets of every object
// of bucket in region, moving each one's version, as a real cloud does
// when an instance goes.
func dropTarget[T any](tx *bolt.Tx, bucket []byte, kind string, now time.Time, region, instanceID string,
	fields func(*T) targeting, put func(*bolt.Tx, *T) error) error {
	var changed []T
	err := tx.Bucket(bucket).ForEach(func(k, v []byte) error {
		var rec T
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decoding %s %q: %w", kind, k, err)
		}
		f := fields(&rec)
		if *f.region == region && slices.Contains(*f.targets, instanceID) {
			*f.targets = slices.DeleteFunc(*f.targets, func(t string) bool { return t == instanceID })
			changed = append(changed, rec)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range changed {
		f := fields(&changed[i])
		*f.version++
		*f.updated = now
		if err := put(tx, &changed[i]); err != nil {
			return err
		}
	}
	return nil
}
