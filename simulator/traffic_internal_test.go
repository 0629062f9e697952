package simulator

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Counters left behind by a delete that did not drop them (a crash
// between the two) go with the next delete's sweep; live ones stay.
func TestOrphanTrafficIsDropped(t *testing.T) {
	db, err := openDB(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := &cloud{db: db, now: func() time.Time { return time.Now().UTC() }}
	err = c.update(func(tx *bolt.Tx) error {
		if err := putLBRecord(tx, &lbRecord{LoadBalancer: exampleapi.LoadBalancer{ID: "lb-live"}}); err != nil {
			return err
		}
		for _, id := range []string{"lb-live", "lb-deleted"} {
			if err := putTraffic(tx, id, &trafficRecord{Next: 3}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.dropOrphanTraffic(); err != nil {
		t.Fatal(err)
	}
	err = c.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTraffic)
		if b.Get([]byte("lb-deleted")) != nil || b.Get([]byte("lb-live")) == nil {
			t.Errorf("after the sweep: deleted kept %v, live kept %v", b.Get([]byte("lb-deleted")) != nil, b.Get([]byte("lb-live")) != nil)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
