package simulator

import (
	"fmt"
	"maps"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The traffic model (connections.go, targethealth.go): simulated client
// connections per load balancer, stored as counters, and where they stand
// computed on read from the load balancer, its pool, its instances and the
// clock. No timer closes a connection: a read after a drain ended sees it
// closed, so the model survives restarts like load balancer provisioning.

// bucketTraffic holds a trafficRecord per load balancer id, for those that
// were ever sent connections. It is created by the first write (openDB
// knows only the object buckets), so reads find it missing until then.
var bucketTraffic = []byte("lb_traffic")

// trafficRecord is a load balancer's connection counters.
type trafficRecord struct {
	// Version moves on every write; it is the ETag of the answers.
	Version int64 `json:"version"`
	// Next is the round-robin position of the next connection, kept
	// below the number of serving targets it was last taken over.
	Next int `json:"next"`
	// Targets are the counters of every target ever assigned a connection.
	Targets map[string]*targetCounters `json:"targets,omitempty"`
}

// targetCounters are one target's connections; those open are
// Assigned - Closed.
type targetCounters struct {
	Assigned int64 `json:"assigned"`
	Closed   int64 `json:"closed"`
}

func getTraffic(tx *bolt.Tx, lbID string) (trafficRecord, error) {
	rec := trafficRecord{Targets: map[string]*targetCounters{}}
	b := tx.Bucket(bucketTraffic)
	if b == nil {
		return rec, nil
	}
	if _, err := getJSON(b, lbID, &rec); err != nil {
		return rec, fmt.Errorf("reading the traffic of %s: %w", lbID, err)
	}
	if rec.Targets == nil {
		rec.Targets = map[string]*targetCounters{}
	}
	return rec, nil
}

func putTraffic(tx *bolt.Tx, lbID string, rec *trafficRecord) error {
	b, err := tx.CreateBucketIfNotExists(bucketTraffic)
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucketTraffic, err)
	}
	rec.Version++
	return putJSON(b, lbID, rec)
}

// dropTraffic removes a load balancer's counters, in the transaction
// that deletes it.
func dropTraffic(tx *bolt.Tx, lbID string) error {
	b := tx.Bucket(bucketTraffic)
	if b == nil {
		return nil
	}
	if err := b.Delete([]byte(lbID)); err != nil {
		return fmt.Errorf("deleting the traffic of %s: %w", lbID, err)
	}
	return nil
}

// lbTargets is where a load balancer sends traffic at one moment.
type lbTargets struct {
	lb exampleapi.LoadBalancer
	// targets are its effective targets: its own, or its pool's.
	targets map[string]bool
	// draining are its pool's draining targets with the end of their delay.
	draining map[string]time.Time
	// instance is the state of each instance named above (or asked for);
	// a deleted instance is absent.
	instance map[string]string
}

// loadLBTargets reads the load balancer lbID with its pool and the
// instances of its targets, its draining targets and extra.
func loadLBTargets(tx *bolt.Tx, lbID string, now time.Time, extra []string) (lbTargets, error) {
	rec, err := storedLBs.get(tx, lbID)
	if err != nil {
		return lbTargets{}, err
	}
	s := lbTargets{lb: rec.view(now), targets: map[string]bool{}, draining: map[string]time.Time{}, instance: map[string]string{}}
	ids := rec.Targets
	if rec.TargetPoolID != "" {
		tp, err := storedTargetPools.get(tx, rec.TargetPoolID)
		if err != nil {
			return lbTargets{}, fmt.Errorf("reading the target pool of load balancer %s: %w", lbID, err)
		}
		ids = tp.Targets
		for _, d := range draining(tp.Draining, now) {
			s.draining[d.ID] = d.Until
		}
	}
	for _, id := range ids {
		s.targets[id] = true
	}
	for _, id := range slices.Concat(ids, slices.Collect(maps.Keys(s.draining)), extra) {
		if _, seen := s.instance[id]; seen {
			continue
		}
		var inst instanceRecord
		ok, err := getJSON(tx.Bucket(bucketInstances), id, &inst)
		if err != nil {
			return lbTargets{}, fmt.Errorf("reading target %s of load balancer %s: %w", id, lbID, err)
		}
		if ok {
			s.instance[id] = inst.State
		}
	}
	return s, nil
}

// state is target id's connection state, and the end of its drain.
func (s lbTargets) state(id string) (string, time.Time) {
	instState, exists := s.instance[id]
	until, isDraining := s.draining[id]
	switch {
	case !exists:
		return exampleapi.ConnectionGone, time.Time{}
	case s.targets[id] && instState == exampleapi.InstanceRunning:
		return exampleapi.ConnectionServing, time.Time{}
	case s.targets[id]:
		return exampleapi.ConnectionStopped, time.Time{}
	case isDraining:
		return exampleapi.ConnectionDraining, until
	}
	return exampleapi.ConnectionGone, time.Time{}
}

// known is every target the model reports on: effective, draining, and
// those of counters, in id order. Deleted instances are left out unless
// they have counters.
func (s lbTargets) known(counters map[string]*targetCounters) []string {
	set := map[string]bool{}
	for id := range s.targets {
		set[id] = true
	}
	for id := range s.draining {
		if _, exists := s.instance[id]; exists {
			set[id] = true
		}
	}
	for id := range counters {
		set[id] = true
	}
	return slices.Sorted(maps.Keys(set))
}
