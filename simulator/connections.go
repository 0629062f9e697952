package simulator

import (
	"maps"
	"net/http"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Simulated connections: new ones go round-robin to the serving targets;
// open ones stay open while their target is a target or draining, and are
// closed once it is gone. Closing is recorded when a traffic request sees
// it, so a target removed and put back between two such requests is seen
// as never having left (docs/example-cloud-api.md, "Traffic").

func validateOpenConnections(req *exampleapi.OpenConnectionsRequest) error {
	return validateRange("count", req.Count, 1, exampleapi.MaxOpenConnections)
}

// errNoServingTargets is 409, not 503: nothing is wrong with the API, the
// load balancer has nowhere to send traffic, and a client must not retry
// it as a transient failure.
func errNoServingTargets(lbID string) *APIError {
	return &APIError{Status: http.StatusConflict, Code: exampleapi.CodeNoServingTargets,
		Message: "load balancer " + lbID + " has no serving target (none is a running instance that is not draining)"}
}

// settle records as closed the open connections of the targets that are
// gone; it reports whether it changed rec.
func settle(s lbTargets, rec *trafficRecord) bool {
	changed := false
	for id, n := range rec.Targets {
		if state, _ := s.state(id); state == exampleapi.ConnectionGone && n.Closed != n.Assigned {
			n.Closed, changed = n.Assigned, true
		}
	}
	return changed
}

// serving is the targets that take new connections, in id order: the
// stable order of the round robin.
func (s lbTargets) serving() []string {
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(s.targets)) {
		if state, _ := s.state(id); state == exampleapi.ConnectionServing {
			ids = append(ids, id)
		}
	}
	return ids
}

// openConnections assigns count new connections of the load balancer
// lbID; count must have passed validateOpenConnections. It answers the
// assignment and the counters' version.
func (c *cloud) openConnections(tx *bolt.Tx, lbID string, count int) (exampleapi.ConnectionAssignment, int64, error) {
	rec, s, _, err := c.settledTraffic(tx, lbID)
	if err != nil {
		return exampleapi.ConnectionAssignment{}, 0, err
	}
	if s.lb.Status != exampleapi.LBStatusActive {
		return exampleapi.ConnectionAssignment{}, 0, conflict("load balancer %s is not active (status %s): it takes connections once active", lbID, s.lb.Status)
	}
	serving := s.serving()
	if len(serving) == 0 {
		return exampleapi.ConnectionAssignment{}, 0, errNoServingTargets(lbID)
	}
	out := exampleapi.ConnectionAssignment{LoadBalancerID: lbID, Count: count, Assigned: map[string]int{}}
	for _, id := range serving {
		out.Assigned[id] = 0
	}
	for i := range count {
		out.Assigned[serving[(rec.Next+i)%len(serving)]]++
	}
	rec.Next = (rec.Next + count) % len(serving)
	for id, n := range out.Assigned {
		if n == 0 {
			continue
		}
		if rec.Targets[id] == nil {
			rec.Targets[id] = &targetCounters{}
		}
		rec.Targets[id].Assigned += int64(n)
	}
	if err := putTraffic(tx, lbID, &rec); err != nil {
		return exampleapi.ConnectionAssignment{}, 0, err
	}
	return out, rec.Version, nil
}

// connections reads the load balancer's connections at the clock's time.
// A read that finds connections to close records it (a write), so a
// target put back later does not get them back; other reads write nothing.
func (c *cloud) connections(lbID string) (out exampleapi.Connections, version int64, err error) {
	var changed bool
	read := func(tx *bolt.Tx) error {
		rec, s, ch, err := c.settledTraffic(tx, lbID)
		if err != nil {
			return err
		}
		if changed = ch; changed && tx.Writable() {
			if err := putTraffic(tx, lbID, &rec); err != nil {
				return err
			}
		}
		out, version = connectionsView(s, rec), rec.Version
		return nil
	}
	if err = c.view(read); err != nil || !changed {
		return out, version, err
	}
	err = c.update(read)
	return out, version, err
}

// settledTraffic reads the counters of lbID and where its targets stand,
// the connections of those gone closed; it reports whether that closed
// any.
func (c *cloud) settledTraffic(tx *bolt.Tx, lbID string) (trafficRecord, lbTargets, bool, error) {
	rec, err := getTraffic(tx, lbID)
	if err != nil {
		return rec, lbTargets{}, false, err
	}
	s, err := loadLBTargets(tx, lbID, c.now(), slices.Collect(maps.Keys(rec.Targets)))
	if err != nil {
		return rec, lbTargets{}, false, err
	}
	return rec, s, settle(s, &rec), nil
}

// connectionsView is the wire form of settled counters.
func connectionsView(s lbTargets, rec trafficRecord) exampleapi.Connections {
	out := exampleapi.Connections{LoadBalancerID: s.lb.ID, Targets: []exampleapi.TargetConnections{}}
	for _, id := range s.known(rec.Targets) {
		state, until := s.state(id)
		tc := exampleapi.TargetConnections{ID: id, State: state}
		if n := rec.Targets[id]; n != nil {
			tc.ConnectionCounts = exampleapi.ConnectionCounts{Assigned: n.Assigned, Open: n.Assigned - n.Closed, Closed: n.Closed}
		}
		if state == exampleapi.ConnectionDraining {
			tc.DrainingUntil = ptrTime(until)
		}
		out.Targets = append(out.Targets, tc)
		out.Totals.Assigned += tc.Assigned
		out.Totals.Open += tc.Open
		out.Totals.Closed += tc.Closed
	}
	return out
}

func ptrTime(t time.Time) *time.Time { return &t }
