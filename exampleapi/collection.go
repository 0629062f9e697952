package exampleapi

import (
	"context"
	"net/http"
	"net/url"
)

// collection is one kind of object of the control API under its path,
// e.g. load balancers (kind "LoadBalancer") under /v1/load-balancers,
// with the requests every such collection answers. Operations are named
// for metrics as the Client methods are: "Get" + kind, and so on.
type collection[T any] struct {
	kind string
	path string
	// plural names the listing's operation; "" is kind + "s".
	plural string
}

var (
	instances     = collection[Instance]{kind: "Instance", path: "/v1/instances"}
	networks      = collection[Network]{kind: "Network", path: "/v1/networks"}
	loadBalancers = collection[LoadBalancer]{kind: "LoadBalancer", path: "/v1/load-balancers"}
	targetPools   = collection[TargetPool]{kind: "TargetPool", path: "/v1/target-pools"}
	certificates  = collection[Certificate]{kind: "Certificate", path: "/v1/certificates"}
	addresses     = collection[Address]{kind: "Address", path: "/v1/addresses", plural: "Addresses"}
)

func (c collection[T]) item(id string) string { return c.path + "/" + esc(id) }

// create posts in, with an idempotency key so that retries create one
// object.
func (c collection[T]) create(ctx context.Context, t *transport, in any) (*T, error) {
	return call[T](ctx, t, request{op: "Create" + c.kind, method: http.MethodPost, path: c.path, idemKey: true, in: in})
}

func (c collection[T]) get(ctx context.Context, t *transport, id string) (*T, error) {
	return call[T](ctx, t, request{op: "Get" + c.kind, method: http.MethodGet, path: c.item(id)})
}

// list reads every page of the objects matching q.
func (c collection[T]) list(ctx context.Context, t *transport, q url.Values) ([]T, error) {
	plural := c.plural
	if plural == "" {
		plural = c.kind + "s"
	}
	return listAll[T](ctx, t, "List"+plural, c.path, q)
}

// update puts in; ifMatch is the version the change is based on (0:
// unconditional).
func (c collection[T]) update(ctx context.Context, t *transport, id string, in any, ifMatch int64) (*T, error) {
	return call[T](ctx, t, request{op: "Update" + c.kind, method: http.MethodPut, path: c.item(id), ifMatch: ifMatch, in: in})
}

func (c collection[T]) delete(ctx context.Context, t *transport, id string) error {
	return t.do(ctx, request{op: "Delete" + c.kind, method: http.MethodDelete, path: c.item(id)})
}

// nameRegion is the query of the listings filtered by region and name,
// each when not empty.
func nameRegion(region, name string) url.Values {
	q := url.Values{}
	if region != "" {
		q.Set("region", region)
	}
	if name != "" {
		q.Set("name", name)
	}
	return q
}
