package cloudconfig

import (
	"time"

	"github.com/example/cloud-provider-example/renderer"
)

// Render is the rendering part of the cloud config: everything but the
// state backend block, which the engine adds per object from State.
func (c *Config) Render() renderer.Config {
	return renderer.Config{
		ClusterID:               c.ClusterID,
		Region:                  c.Region,
		Endpoint:                c.API.Endpoint,
		LoadBalancerModule:      c.Modules.LoadBalancer,
		RoutesModule:            c.Modules.Routes,
		NetworkID:               c.Network.ID,
		NetworkName:             c.Network.Name,
		DefaultLoadBalancerType: c.LoadBalancer.DefaultType,
		DefaultAlgorithm:        c.LoadBalancer.DefaultAlgorithm,
		MaxListeners:            c.LoadBalancer.MaxListeners,
		DeregistrationDelay:     c.deregistrationDelay(),
	}
}

// deregistrationDelay is the target pools' delay (its default before
// defaults ran: Render may be called on a config made in code).
func (c *Config) deregistrationDelay() time.Duration {
	if d := c.LoadBalancer.TargetPools.DeregistrationDelay; d != nil {
		return d.Duration
	}
	return DefaultDeregistrationDelay
}
