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
	return listAll[Zone](ctx, c.t, "ListZones", "/v1/zones", nameRegion(region, ""))
}

// CreateInstance creates an instance.
func (c *Client) CreateInstance(ctx context.Context, in CreateInstanceRequest) (*Instance, error) {
	return instances.create(ctx, c.t, in)
}

// GetInstance reads one instance.
func (c *Client) GetInstance(ctx context.Context, id string) (*Instance, error) {
	return instances.get(ctx, c.t, id)
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
	return instances.list(ctx, c.t, q)
}

// UpdateInstanceTags replaces an instance's tags. ifMatch is the version
// the change is based on (0: unconditional).
func (c *Client) UpdateInstanceTags(ctx context.Context, id string, tags map[string]string, ifMatch int64) (*Instance, error) {
	return call[Instance](ctx, c.t, request{op: "UpdateInstanceTags", method: http.MethodPut, path: instances.item(id) + "/tags",
		ifMatch: ifMatch, in: UpdateInstanceTagsRequest{Tags: tags}})
}

// SetInstanceState starts or stops an instance.
func (c *Client) SetInstanceState(ctx context.Context, id, state string, ifMatch int64) (*Instance, error) {
	return call[Instance](ctx, c.t, request{op: "SetInstanceState", method: http.MethodPut, path: instances.item(id) + "/state",
		ifMatch: ifMatch, in: SetInstanceStateRequest{State: state}})
}

// DeleteInstance deletes an instance.
func (c *Client) DeleteInstance(ctx context.Context, id string) error {
	return instances.delete(ctx, c.t, id)
}

// CreateNetwork creates a network (with its route table).
func (c *Client) CreateNetwork(ctx context.Context, in CreateNetworkRequest) (*Network, error) {
	return networks.create(ctx, c.t, in)
}

// GetNetwork reads one network.
func (c *Client) GetNetwork(ctx context.Context, id string) (*Network, error) {
	return networks.get(ctx, c.t, id)
}

// ListNetworks lists networks, filtered by region and name when not empty.
func (c *Client) ListNetworks(ctx context.Context, region, name string) ([]Network, error) {
	return networks.list(ctx, c.t, nameRegion(region, name))
}

// DeleteNetwork deletes a network whose route table is empty.
func (c *Client) DeleteNetwork(ctx context.Context, id string) error {
	return networks.delete(ctx, c.t, id)
}

// CreateRoute adds a route to a network's route table.
func (c *Client) CreateRoute(ctx context.Context, networkID string, in CreateRouteRequest) (*Route, error) {
	return call[Route](ctx, c.t, request{op: "CreateRoute", method: http.MethodPost, path: networks.item(networkID) + "/routes",
		idemKey: true, in: in})
}

// GetRoute reads one route.
func (c *Client) GetRoute(ctx context.Context, networkID, routeID string) (*Route, error) {
	return call[Route](ctx, c.t, request{op: "GetRoute", method: http.MethodGet, path: networks.item(networkID) + "/routes/" + esc(routeID)})
}

// ListRoutes lists a network's route table.
func (c *Client) ListRoutes(ctx context.Context, networkID string) ([]Route, error) {
	return listAll[Route](ctx, c.t, "ListRoutes", networks.item(networkID)+"/routes", nil)
}

// DeleteRoute removes a route.
func (c *Client) DeleteRoute(ctx context.Context, networkID, routeID string) error {
	return c.t.do(ctx, request{op: "DeleteRoute", method: http.MethodDelete, path: networks.item(networkID) + "/routes/" + esc(routeID)})
}

// CreateLoadBalancer creates a load balancer; it starts provisioning.
func (c *Client) CreateLoadBalancer(ctx context.Context, in LoadBalancerSpec) (*LoadBalancer, error) {
	return loadBalancers.create(ctx, c.t, in)
}

// GetLoadBalancer reads one load balancer.
func (c *Client) GetLoadBalancer(ctx context.Context, id string) (*LoadBalancer, error) {
	return loadBalancers.get(ctx, c.t, id)
}

// ListLoadBalancers lists load balancers matching f (all pages).
func (c *Client) ListLoadBalancers(ctx context.Context, f LoadBalancerFilter) ([]LoadBalancer, error) {
	return loadBalancers.list(ctx, c.t, nameRegion(f.Region, f.Name))
}

// UpdateLoadBalancer replaces the mutable fields of a load balancer.
// ifMatch is the version the change is based on (0: unconditional).
func (c *Client) UpdateLoadBalancer(ctx context.Context, id string, in UpdateLoadBalancerRequest, ifMatch int64) (*LoadBalancer, error) {
	return loadBalancers.update(ctx, c.t, id, in, ifMatch)
}

// DeleteLoadBalancer deletes a load balancer.
func (c *Client) DeleteLoadBalancer(ctx context.Context, id string) error {
	return loadBalancers.delete(ctx, c.t, id)
}

// CreateTargetPool creates a target pool.
func (c *Client) CreateTargetPool(ctx context.Context, in CreateTargetPoolRequest) (*TargetPool, error) {
	return targetPools.create(ctx, c.t, in)
}

// GetTargetPool reads one target pool.
func (c *Client) GetTargetPool(ctx context.Context, id string) (*TargetPool, error) {
	return targetPools.get(ctx, c.t, id)
}

// ListTargetPools lists target pools matching f (all pages).
func (c *Client) ListTargetPools(ctx context.Context, f TargetPoolFilter) ([]TargetPool, error) {
	return targetPools.list(ctx, c.t, nameRegion(f.Region, f.Name))
}

// UpdateTargetPool replaces a target pool's targets and tags; every load
// balancer referencing the pool forwards to the new targets at once.
// ifMatch is the version the change is based on (0: unconditional).
func (c *Client) UpdateTargetPool(ctx context.Context, id string, in UpdateTargetPoolRequest, ifMatch int64) (*TargetPool, error) {
	return targetPools.update(ctx, c.t, id, in, ifMatch)
}

// DeleteTargetPool deletes a target pool; a pool still referenced by a
// load balancer is a conflict (409).
func (c *Client) DeleteTargetPool(ctx context.Context, id string) error {
	return targetPools.delete(ctx, c.t, id)
}

// CreateCertificate uploads a certificate and its private key; the answer
// (like every later one) carries no key.
func (c *Client) CreateCertificate(ctx context.Context, in CreateCertificateRequest) (*Certificate, error) {
	return certificates.create(ctx, c.t, in)
}

// GetCertificate reads one certificate.
func (c *Client) GetCertificate(ctx context.Context, id string) (*Certificate, error) {
	return certificates.get(ctx, c.t, id)
}

// ListCertificates lists certificates matching f (all pages).
func (c *Client) ListCertificates(ctx context.Context, f CertificateFilter) ([]Certificate, error) {
	return certificates.list(ctx, c.t, nameRegion(f.Region, f.Name))
}

// CertificatesInUse is the set of the certificate ids that listeners of
// the region's load balancers (every region's, for "") use.
func (c *Client) CertificatesInUse(ctx context.Context, region string) (map[string]bool, error) {
	lbs, err := c.ListLoadBalancers(ctx, LoadBalancerFilter{Region: region})
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, lb := range lbs {
		for _, l := range lb.Listeners {
			for _, id := range l.CertificateIDs {
				used[id] = true
			}
		}
	}
	return used, nil
}

// DeleteCertificate deletes a certificate; one still used by a listener is
// a conflict (409).
func (c *Client) DeleteCertificate(ctx context.Context, id string) error {
	return certificates.delete(ctx, c.t, id)
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
