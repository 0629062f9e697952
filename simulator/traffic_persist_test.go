package simulator_test

import (
	"maps"
	"net/http"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/simulator/simtest"
)

// The counters and the round-robin position survive a restart; deleting a
// load balancer removes its counters from the database.
func TestConnectionsPersistAndGoWithTheirLoadBalancer(t *testing.T) {
	c, sim, lb, _, ids := trafficSetup(t, 0)
	spec := lbSpec("other")
	spec.Targets = ids
	other := c.lbs().create(spec).ID
	c.openConns(lb, 4)
	c.openConns(other, 1)
	before, _ := c.conns(lb)
	sim.Stop()

	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir))
	c = control(t, sim)
	if after, _ := c.conns(lb); after.Totals != before.Totals || len(after.Targets) != 3 {
		t.Errorf("after restart: %+v, want %+v", after, before)
	}
	// Position 4 of three targets: the second.
	if got, want := c.openConns(lb, 1).Assigned, map[string]int{ids[0]: 0, ids[1]: 1, ids[2]: 0}; !maps.Equal(got, want) {
		t.Errorf("after restart: %v, want %v", got, want)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+lb, nil, nil)
	c.apiError(http.StatusNotFound, "GET", "/v1/load-balancers/"+lb+"/connections", nil)
	sim.Stop()

	stored := trafficKeys(t, sim.DataDir)
	if stored[lb] || !stored[other] {
		t.Errorf("stored traffic of %v; want %s's and not the deleted %s's", stored, other, lb)
	}
}

// trafficKeys lists the load balancer ids the stopped simulator's database
// holds counters for.
func trafficKeys(t *testing.T, dataDir string) map[string]bool {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dataDir, "example-cloud.db"), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys := map[string]bool{}
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("lb_traffic"))
		if b == nil {
			t.Fatal("no lb_traffic bucket")
		}
		return b.ForEach(func(k, _ []byte) error {
			keys[string(k)] = true
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
