package exampleapi

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// The simulator's traffic model: simulated client connections to a load
// balancer and the health of its targets, so tests can watch where traffic
// goes while targets join, drain and leave. A real cloud has no such
// endpoints; these exist so a draining node can be proven to get no new
// connections and to keep its open ones until its delay ends.

// MaxOpenConnections is the most connections one OpenConnections call
// simulates.
const MaxOpenConnections = 1000

// CodeNoServingTargets (409) answers an OpenConnections call on a load
// balancer none of whose targets can take a connection.
const CodeNoServingTargets = "no_serving_targets"

// Connection states of a target (TargetConnections.State).
const (
	// ConnectionServing: a target whose instance is running; it gets new
	// connections.
	ConnectionServing = "serving"
	// ConnectionStopped: a target whose instance is stopped; it gets no
	// new connections and keeps its open ones.
	ConnectionStopped = "stopped"
	// ConnectionDraining: removed from its pool, its delay not ended; it
	// gets no new connections and keeps its open ones.
	ConnectionDraining = "draining"
	// ConnectionGone: no longer a target (its drain ended, it was removed
	// without a delay, or its instance was deleted); its connections are
	// closed.
	ConnectionGone = "gone"
)

// Target health (TargetHealth.Health).
const (
	TargetHealthy   = "healthy"
	TargetDraining  = "draining"
	TargetUnhealthy = "unhealthy"
	// TargetUnused: no load balancer forwards to the target's pool, so
	// none checks it (pool target health only).
	TargetUnused = "unused"
)

// OpenConnectionsRequest simulates Count (1..MaxOpenConnections) new
// client connections.
type OpenConnectionsRequest struct {
	Count int `json:"count"`
}

// ConnectionAssignment is where the connections of one OpenConnections
// call went.
type ConnectionAssignment struct {
	LoadBalancerID string `json:"load_balancer_id"`
	Count          int    `json:"count"`
	// Assigned has every target that was serving, with the connections it
	// got from this call (0 when there were fewer connections than
	// serving targets).
	Assigned map[string]int `json:"assigned"`
}

// ConnectionCounts counts connections: ever assigned, still open, closed.
type ConnectionCounts struct {
	Assigned int64 `json:"assigned"`
	Open     int64 `json:"open"`
	Closed   int64 `json:"closed"`
}

// TargetConnections is one target's connections.
type TargetConnections struct {
	ID    string `json:"id"`
	State string `json:"state"`
	ConnectionCounts
	// DrainingUntil is set while State is draining.
	DrainingUntil *time.Time `json:"draining_until,omitempty"`
}

// Connections are a load balancer's connections per target (in id order):
// every target that was ever assigned one, is a target or is draining.
type Connections struct {
	LoadBalancerID string              `json:"load_balancer_id"`
	Targets        []TargetConnections `json:"targets"`
	Totals         ConnectionCounts    `json:"totals"`
}

// TargetHealth is the health check's verdict on one target.
type TargetHealth struct {
	ID     string `json:"id"`
	Health string `json:"health"`
	Reason string `json:"reason"`
	// DrainingUntil is set when Health is draining.
	DrainingUntil *time.Time `json:"draining_until,omitempty"`
}

// TargetHealthResponse is the health of a load balancer's effective and
// draining targets: its own (or its pool's) in id order, then those of
// the pools of target type ip its rules forward to, pool by pool.
type TargetHealthResponse struct {
	LoadBalancerID string         `json:"load_balancer_id"`
	Targets        []TargetHealth `json:"targets"`
}

// TargetPoolHealthResponse is the health of a pool's targets and its
// draining ones, in the pool's order, as the load balancers forwarding to
// it find them (AWS's DescribeTargetHealth of a target group): healthy
// only when every one of them finds the target healthy; with none,
// unused. What a pod's readiness gate waits for.
type TargetPoolHealthResponse struct {
	TargetPoolID string `json:"target_pool_id"`
	// LoadBalancerIDs forward to the pool, in id order.
	LoadBalancerIDs []string       `json:"load_balancer_ids"`
	Targets         []TargetHealth `json:"targets"`
}

// TargetPoolHealth reads the health of target pool id's targets.
func (c *Client) TargetPoolHealth(ctx context.Context, id string) (*TargetPoolHealthResponse, error) {
	return call[TargetPoolHealthResponse](ctx, c.t, request{op: "TargetPoolHealth", method: http.MethodGet,
		path: targetPools.item(id) + "/target-health"})
}

// OpenConnections simulates count new client connections to the load
// balancer lbID, assigned round-robin to its serving targets. It sends an
// Idempotency-Key, so a retry of a call whose answer was lost does not
// count the connections twice.
func (c *Client) OpenConnections(ctx context.Context, lbID string, count int) (*ConnectionAssignment, error) {
	return call[ConnectionAssignment](ctx, c.t, request{op: "OpenConnections", method: http.MethodPost,
		path: loadBalancers.item(lbID) + "/connections", idemKey: true, in: OpenConnectionsRequest{Count: count}})
}

// Connections reads the load balancer's connections per target.
func (c *Client) Connections(ctx context.Context, lbID string) (*Connections, error) {
	return call[Connections](ctx, c.t, request{op: "Connections", method: http.MethodGet,
		path: loadBalancers.item(lbID) + "/connections"})
}

// TargetHealth reads the health of the load balancer's targets.
func (c *Client) TargetHealth(ctx context.Context, lbID string) ([]TargetHealth, error) {
	resp, err := call[TargetHealthResponse](ctx, c.t, request{op: "TargetHealth", method: http.MethodGet,
		path: loadBalancers.item(lbID) + "/target-health"})
	if err != nil {
		return nil, err
	}
	return resp.Targets, nil
}

// IsNoServingTargets reports whether err is the answer to OpenConnections
// on a load balancer with no serving target.
func IsNoServingTargets(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == CodeNoServingTargets
}
