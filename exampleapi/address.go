package exampleapi

import "context"

// Reserved addresses: the client's methods (the types are in types.go).

// CreateAddress reserves an address, attached to in.LoadBalancerID when
// it is set.
func (c *Client) CreateAddress(ctx context.Context, in CreateAddressRequest) (*Address, error) {
	return addresses.create(ctx, c.t, in)
}

// GetAddress reads one address.
func (c *Client) GetAddress(ctx context.Context, id string) (*Address, error) {
	return addresses.get(ctx, c.t, id)
}

// ListAddresses lists addresses matching f (all pages).
func (c *Client) ListAddresses(ctx context.Context, f AddressFilter) ([]Address, error) {
	q := nameRegion(f.Region, f.Name)
	if f.IP != "" {
		q.Set("ip", f.IP)
	}
	return addresses.list(ctx, c.t, q)
}

// UpdateAddress attaches, moves or detaches an address and replaces its
// tags. ifMatch is the version the change is based on (0: unconditional).
func (c *Client) UpdateAddress(ctx context.Context, id string, in UpdateAddressRequest, ifMatch int64) (*Address, error) {
	return addresses.update(ctx, c.t, id, in, ifMatch)
}

// DeleteAddress releases an address; one attached to a load balancer is a
// conflict (409): detach it first.
func (c *Client) DeleteAddress(ctx context.Context, id string) error {
	return addresses.delete(ctx, c.t, id)
}
