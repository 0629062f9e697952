package simulator

import (
	"encoding/json"
	"fmt"
	"net/netip"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

const (
	kindNetwork = "network"
	kindRoute   = "route"
)

// firstNetwork is the region's oldest network (ties broken by id): the one
// instances take their private address from.
func firstNetwork(tx *bolt.Tx, region string) (first exampleapi.Network, found bool, err error) {
	err = tx.Bucket(bucketNetworks).ForEach(func(k, v []byte) error {
		var n exampleapi.Network
		if err := json.Unmarshal(v, &n); err != nil {
			return fmt.Errorf("decoding network %q: %w", k, err)
		}
		if n.Region == region && (!found || n.CreatedAt.Before(first.CreatedAt)) {
			first, found = n, true
		}
		return nil
	})
	return first, found, err
}

func networkPoolV4(n exampleapi.Network) pool {
	return prefixPool("network/"+n.ID+"/v4", netip.MustParsePrefix(n.CIDR))
}

func networkPoolV6(n exampleapi.Network) pool {
	return prefixPool("network/"+n.ID+"/v6", netip.MustParsePrefix(n.IPv6CIDR))
}

// createNetwork creates a network; req must have passed
// validateCreateNetwork.
func (c *cloud) createNetwork(tx *bolt.Tx, req exampleapi.CreateNetworkRequest) (exampleapi.Network, error) {
	if err := requireNewName(tx, kindNetwork, "a network", req.Region, req.Name); err != nil {
		return exampleapi.Network{}, err
	}
	n := exampleapi.Network{
		ObjectMeta: newMeta("net-", req.Name, req.Region, c.now()),
		CIDR:       netip.MustParsePrefix(req.CIDR).String(),
	}
	if req.IPv6CIDR != "" {
		n.IPv6CIDR = netip.MustParsePrefix(req.IPv6CIDR).String()
	}
	if err := putJSON(tx.Bucket(bucketNetworks), n.ID, n); err != nil {
		return exampleapi.Network{}, err
	}
	return n, putName(tx, kindNetwork, n.Region, n.Name, n.ID)
}

func (c *cloud) getNetwork(id string) (exampleapi.Network, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.Network, error) { return storedNetworks.get(tx, id) })
}

func (c *cloud) listNetworks(region, name string, pg page) (exampleapi.ListResponse[exampleapi.Network], error) {
	return listNamed(c, storedNetworks, pg, region, name, func(n *exampleapi.Network) exampleapi.Network { return *n })
}

// deleteNetwork deletes a network whose route table is empty. Instances
// keep the addresses they got from it.
func (c *cloud) deleteNetwork(id, ifMatch string) error {
	return deleteNamed(c, storedNetworks, id, ifMatch, func(tx *bolt.Tx, _ *exampleapi.Network) error {
		if hasNamesWithPrefix(tx, kindRoute, id) {
			return conflict("network %s still has routes in its route table; delete them first", id)
		}
		for _, p := range []string{"network/" + id + "/v4", "network/" + id + "/v6"} {
			if tx.Bucket(bucketPools).Bucket([]byte(p)) != nil {
				if err := tx.Bucket(bucketPools).DeleteBucket([]byte(p)); err != nil {
					return fmt.Errorf("deleting pool %s: %w", p, err)
				}
			}
		}
		return nil
	})
}

// Routes are stored by id in one bucket; the name index maps
// (route, network id, destination) to the route id, which both enforces one
// route per destination and tells whether a table is empty.

// routeView computes the route's status: blackhole once its target is gone.
func routeView(tx *bolt.Tx, r exampleapi.Route) exampleapi.Route {
	r.Status = exampleapi.RouteStatusActive
	if tx.Bucket(bucketInstances).Get([]byte(r.TargetInstanceID)) == nil {
		r.Status = exampleapi.RouteStatusBlackhole
	}
	return r
}

func getRoute(tx *bolt.Tx, networkID, routeID string) (exampleapi.Route, error) {
	if _, err := storedNetworks.get(tx, networkID); err != nil {
		return exampleapi.Route{}, err
	}
	var r exampleapi.Route
	ok, err := getJSON(tx.Bucket(bucketRoutes), routeID, &r)
	if err == nil && (!ok || r.NetworkID != networkID) {
		err = notFound(kindRoute, routeID)
	}
	return r, err
}

// createRoute adds a route; req must have passed validateCreateRoute.
func (c *cloud) createRoute(tx *bolt.Tx, networkID string, req exampleapi.CreateRouteRequest) (exampleapi.Route, error) {
	n, err := storedNetworks.get(tx, networkID)
	if err != nil {
		return exampleapi.Route{}, err
	}
	if err := requireInstanceInRegion(tx, "target_instance_id", req.TargetInstanceID, n.Region); err != nil {
		return exampleapi.Route{}, err
	}
	// Index by the normalised form so that e.g. fd00:0::/64 and fd00::/64
	// are the same destination.
	dest := netip.MustParsePrefix(req.DestinationCIDR).String()
	if id := lookupName(tx, kindRoute, networkID, dest); id != "" {
		return exampleapi.Route{}, conflict("network %s already has a route for %s (%s)", networkID, dest, id)
	}
	r := exampleapi.Route{
		ID: newID("rt-"), NetworkID: networkID, DestinationCIDR: dest,
		TargetInstanceID: req.TargetInstanceID, CreatedAt: c.now(),
	}
	if err := putJSON(tx.Bucket(bucketRoutes), r.ID, r); err != nil {
		return exampleapi.Route{}, err
	}
	if err := putName(tx, kindRoute, networkID, dest, r.ID); err != nil {
		return exampleapi.Route{}, err
	}
	return routeView(tx, r), nil
}

func (c *cloud) getRoute(networkID, routeID string) (exampleapi.Route, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.Route, error) {
		r, err := getRoute(tx, networkID, routeID)
		return routeView(tx, r), err
	})
}

func (c *cloud) listRoutes(networkID string, pg page) (resp exampleapi.ListResponse[exampleapi.Route], err error) {
	err = c.view(func(tx *bolt.Tx) error {
		if _, err := storedNetworks.get(tx, networkID); err != nil {
			return err
		}
		resp, err = listBucket(tx.Bucket(bucketRoutes), pg, func(k, v []byte) (exampleapi.Route, bool, error) {
			var r exampleapi.Route
			if err := json.Unmarshal(v, &r); err != nil {
				return r, false, fmt.Errorf("decoding route %q: %w", k, err)
			}
			return routeView(tx, r), r.NetworkID == networkID, nil
		})
		return err
	})
	return resp, err
}

func (c *cloud) deleteRoute(networkID, routeID string) error {
	return c.update(func(tx *bolt.Tx) error {
		r, err := getRoute(tx, networkID, routeID)
		if err != nil {
			return err
		}
		if err := deleteName(tx, kindRoute, networkID, r.DestinationCIDR); err != nil {
			return err
		}
		return dropObject(tx, bucketRoutes, kindRoute, routeID)
	})
}
