package exampleapi

import (
	"context"
	"net/http"
	"net/url"
	"sort"
)

// Client calls the Example control API. It is safe for concurrent use.
type Client struct {
	t *transport
}

// New returns a control API client.
func New(o Options) (*Client, error) {
	t, err := newTransport(o)
	if err != nil {
		return nil, err
	}
	return &Client{t: t}, nil
}

func esc(s string) string { return url.PathEscape(s) }

// ListRegions lists the regions with their zones.
func (c *Client) ListRegions(ctx context.Context) ([]Region, error) {
	return listAll[Region](ctx, c.t, "ListRegions", "/v1/regions", nil)
}

// ListZones lists the zones, of one region when region is not empty.
func (c *Client) ListZones(ctx context.Context, region string) ([]Zone, error) {
	q := url.Values{}
	if region != "" {
		q.Set("region", region)
	}
	return listAll[Zone](ctx, c.t, "ListZones", "/v1/zones", q)
}

// CreateInstance creates an instance.
func (c *Client) CreateInstance(ctx context.Context, in CreateInstanceRequest) (*Instance, error) {
	return call[Instance](ctx, c.t, request{op: "CreateInstance", method: http.MethodPost, path: "/v1/instances", idemKey: true, in: in})
}

// GetInstance reads one instance.
func (c *Client) GetInstance(ctx context.Context, id string) (*Instance, error) {
	return call[Instance](ctx, c.t, request{op: "GetInstance", method: http.MethodGet, path: "/v1/instances/" + esc(id)})
}

// ListInstances lists instances matching f (all pages).
func (c *Client) ListInstances(ctx context.Context, f InstanceFilter) ([]Instance, error) {
	q := url.Values{}
	for k, v := range map[string]string{"name": f.Name, "zone": f.Zone, "region": f.Region} {
		if v != "" {
			q.Set(k, v)
		}
	}
	keys := make([]string, 0, len(f.Tags))
	for k := range f.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := f.Tags[k]; v != "" {
			q.Add("tag", k+"="+v)
		} else {
			q.Add("tag", k)
		}
	}
	return listAll[Instance](ctx, c.t, "ListInstances", "/v1/instances", q)
}

// UpdateInstanceTags replaces an instance's tags. ifMatch is the version
// the change is based on (0: unconditional).
func (c *Client) UpdateInstanceTags(ctx context.Context, id string, tags map[string]string, ifMatch int64) (*Instance, error) {
	return call[Instance](ctx, c.t, request{op: "UpdateInstanceTags", method: http.MethodPut, path: "/v1/instances/" + esc(id) + "/tags",
		ifMatch: ifMatch, in: UpdateInstanceTagsRequest{Tags: tags}})
}

// SetInstanceState starts or stops an instance.
func (c *Client) SetInstanceState(ctx context.Context, id, state string, ifMatch int64) (*Instance, error) {
	return call[Instance](ctx, c.t, request{op: "SetInstanceState", method: http.MethodPut, path: "/v1/instances/" + esc(id) + "/state",
		ifMatch: ifMatch, in: SetInstanceStateRequest{State: state}})
}

// DeleteInstance deletes an instance.
func (c *Client) DeleteInstance(ctx context.Context, id string) error {
	return c.t.do(ctx, request{op: "DeleteInstance", method: http.MethodDelete, path: "/v1/instances/" + esc(id)})
}

// CreateNetwork creates a network (with its route table).
func (c *Client) CreateNetwork(ctx context.Context, in CreateNetworkRequest) (*Network, error) {
	return call[Network](ctx, c.t, request{op: "CreateNetwork", method: http.MethodPost, path: "/v1/networks", idemKey: true, in: in})
}

// GetNetwork reads one network.
func (c *Client) GetNetwork(ctx context.Context, id string) (*Network, error) {
	return call[Network](ctx, c.t, request{op: "GetNetwork", method: http.MethodGet, path: "/v1/networks/" + esc(id)})
}

// ListNetworks lists networks, filtered by region and name when not empty.
func (c *Client) ListNetworks(ctx context.Context, region, name string) ([]Network, error) {
	q := url.Values{}
	if region != "" {
		q.Set("region", region)
	}
	if name != "" {
		q.Set("name", name)
	}
	return listAll[Network](ctx, c.t, "ListNetworks", "/v1/networks", q)
}

// DeleteNetwork deletes a network whose route table is empty.
func (c *Client) DeleteNetwork(ctx context.Context, id string) error {
	return c.t.do(ctx, request{op: "DeleteNetwork", method: http.MethodDelete, path: "/v1/networks/" + esc(id)})
}

// CreateRoute adds a route to a network's route table.
func (c *Client) CreateRoute(ctx context.Context, networkID string, in CreateRouteRequest) (*Route, error) {
	return call[Route](ctx, c.t, request{op: "CreateRoute", method: http.MethodPost, path: "/v1/networks/" + esc(networkID) + "/routes",
		idemKey: true, in: in})
}

// GetRoute reads one route.
func (c *Client) GetRoute(ctx context.Context, networkID, routeID string) (*Route, error) {
	return call[Route](ctx, c.t, request{op: "GetRoute", method: http.MethodGet, path: "/v1/networks/" + esc(networkID) + "/routes/" + esc(routeID)})
}

// ListRoutes lists a network's route table.
func (c *Client) ListRoutes(ctx context.Context, networkID string) ([]Route, error) {
	return listAll[Route](ctx, c.t, "ListRoutes", "/v1/networks/"+esc(networkID)+"/routes", nil)
}

// DeleteRoute removes a route.
func (c *Client) DeleteRoute(ctx context.Context, networkID, routeID string) error {
	return c.t.do(ctx, request{op: "DeleteRoute", method: http.MethodDelete, path: "/v1/networks/" + esc(networkID) + "/routes/" + esc(routeID)})
}

// CreateLoadBalancer creates a load balancer; it starts provisioning.
func (c *Client) CreateLoadBalancer(ctx context.Context, in LoadBalancerSpec) (*LoadBalancer, error) {
	return call[LoadBalancer](ctx, c.t, request{op: "CreateLoadBalancer", method: http.MethodPost, path: "/v1/load-balancers", idemKey: true, in: in})
}

// GetLoadBalancer reads one load balancer.
func (c *Client) GetLoadBalancer(ctx context.Context, id string) (*LoadBalancer, error) {
	return call[LoadBalancer](ctx, c.t, request{op: "GetLoadBalancer", method: http.MethodGet, path: "/v1/load-balancers/" + esc(id)})
}

// ListLoadBalancers lists load balancers matching f (all pages).
func (c *Client) ListLoadBalancers(ctx context.Context, f LoadBalancerFilter) ([]LoadBalancer, error) {
	q := url.Values{}
	if f.Region != "" {
		q.Set("region", f.Region)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	return listAll[LoadBalancer](ctx, c.t, "ListLoadBalancers", "/v1/load-balancers", q)
}

// UpdateLoadBalancer replaces the mutable fields of a load balancer.
// ifMatch is the version the change is based on (0: unconditional).
func (c *Client) UpdateLoadBalancer(ctx context.Context, id string, in UpdateLoadBalancerRequest, ifMatch int64) (*LoadBalancer, error) {
	return call[LoadBalancer](ctx, c.t, request{op: "UpdateLoadBalancer", method: http.MethodPut, path: "/v1/load-balancers/" + esc(id),
		ifMatch: ifMatch, in: in})
}

// DeleteLoadBalancer deletes a load balancer.
func (c *Client) DeleteLoadBalancer(ctx context.Context, id string) error {
	return c.t.do(ctx, request{op: "DeleteLoadBalancer", method: http.MethodDelete, path: "/v1/load-balancers/" + esc(id)})
}

// CreateTargetPool creates a target pool.
func (c *Client) CreateTargetPool(ctx context.Context, in CreateTargetPoolRequest) (*TargetPool, error) {
	return call[TargetPool](ctx, c.t, request{op: "CreateTargetPool", method: http.MethodPost, path: "/v1/target-pools", idemKey: true, in: in})
}

// GetTargetPool reads one target pool.
func (c *Client) GetTargetPool(ctx context.Context, id string) (*TargetPool, error) {
	return call[TargetPool](ctx, c.t, request{op: "GetTargetPool", method: http.MethodGet, path: "/v1/target-pools/" + esc(id)})
}

// ListTargetPools lists target pools matching f (all pages).
func (c *Client) ListTargetPools(ctx context.Context, f TargetPoolFilter) ([]TargetPool, error) {
	q := url.Values{}
	if f.Region != "" {
		q.Set("region", f.Region)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	return listAll[TargetPool](ctx, c.t, "ListTargetPools", "/v1/target-pools", q)
}

// UpdateTargetPool replaces a target pool's targets and tags; every load
// balancer referencing the pool forwards to the new targets at once.
// ifMatch is the version the change is based on (0: unconditional).
func (c *Client) UpdateTargetPool(ctx context.Context, id string, in UpdateTargetPoolRequest, ifMatch int64) (*TargetPool, error) {
	return call[TargetPool](ctx, c.t, request{op: "UpdateTargetPool", method: http.MethodPut, path: "/v1/target-pools/" + esc(id),
		ifMatch: ifMatch, in: in})
}

// DeleteTargetPool deletes a target pool; a pool still referenced by a
// load balancer is a conflict (409).
func (c *Client) DeleteTargetPool(ctx context.Context, id string) error {
	return c.t.do(ctx, request{op: "DeleteTargetPool", method: http.MethodDelete, path: "/v1/target-pools/" + esc(id)})
}

// CreateCertificate uploads a certificate and its private key; the answer
// (like every later one) carries no key.
func (c *Client) CreateCertificate(ctx context.Context, in CreateCertificateRequest) (*Certificate, error) {
	return call[Certificate](ctx, c.t, request{op: "CreateCertificate", method: http.MethodPost, path: "/v1/certificates", idemKey: true, in: in})
}

// GetCertificate reads one certificate.
func (c *Client) GetCertificate(ctx context.Context, id string) (*Certificate, error) {
	return call[Certificate](ctx, c.t, request{op: "GetCertificate", method: http.MethodGet, path: "/v1/certificates/" + esc(id)})
}

// ListCertificates lists certificates matching f (all pages).
func (c *Client) ListCertificates(ctx context.Context, f CertificateFilter) ([]Certificate, error) {
	q := url.Values{}
	if f.Region != "" {
		q.Set("region", f.Region)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	return listAll[Certificate](ctx, c.t, "ListCertificates", "/v1/certificates", q)
}

// DeleteCertificate deletes a certificate; one still used by a listener is
// a conflict (409).
func (c *Client) DeleteCertificate(ctx context.Context, id string) error {
	return c.t.do(ctx, request{op: "DeleteCertificate", method: http.MethodDelete, path: "/v1/certificates/" + esc(id)})
}

// GetFaults reads the simulator's realism switches (admin).
func (c *Client) GetFaults(ctx context.Context) (*Faults, error) {
	return call[Faults](ctx, c.t, request{op: "GetFaults", method: http.MethodGet, path: "/admin/v1/faults"})
}

// FaultStats reads what the simulator's realism switches did (admin).
func (c *Client) FaultStats(ctx context.Context) (*FaultStats, error) {
	return call[FaultStats](ctx, c.t, request{op: "FaultStats", method: http.MethodGet, path: "/admin/v1/fault-stats"})
}

// SetFaults replaces the simulator's realism switches (admin).
func (c *Client) SetFaults(ctx context.Context, f Faults) (*Faults, error) {
	return call[Faults](ctx, c.t, request{op: "SetFaults", method: http.MethodPut, path: "/admin/v1/faults", in: f})
}
