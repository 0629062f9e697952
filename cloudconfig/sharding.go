package cloudconfig

import (
	"cmp"
	"time"
)

// ShardingConfig spreads the load balancers over every replica
// (docs/adr/0017-shards-owned-by-leases.md): each replica runs the
// service controller over the Services of the shards it holds, by Leases
// in the controller's namespace (review.namespace). Off, the leader alone
// runs it, as k8s.io/cloud-provider does.
type ShardingConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// Shards is how many shards the objects hash into (default 12); every
	// replica must agree, and a replica holds about shards/replicas.
	Shards int `json:"shards,omitempty"`
	// LeaseDuration is how long a shard's Lease holds without renewal
	// (default 15s): a replica that dies loses its shards after it.
	LeaseDuration Duration `json:"leaseDuration,omitempty"`
}

// Sharding defaults.
const (
	DefaultShards             = 12
	DefaultShardLeaseDuration = 15 * time.Second
	// MaxShards bounds the Lease writes: every replica renews each of
	// its shards four times a lease.
	MaxShards = 256
)

func (s *ShardingConfig) defaults() {
	if s.Shards == 0 {
		s.Shards = DefaultShards
	}
	if s.LeaseDuration.Duration == 0 {
		s.LeaseDuration.Duration = DefaultShardLeaseDuration
	}
}

func (s *ShardingConfig) validate(bad func(field, format string, args ...any)) {
	if s.Shards < 1 || s.Shards > MaxShards {
		bad("sharding.shards", "%d is out of range 1-%d", s.Shards, MaxShards)
	}
	if d := s.LeaseDuration; d.invalid != "" || d.Duration < 2*time.Second || d.Duration > 5*time.Minute {
		bad("sharding.leaseDuration", "%q: want a duration from 2s to 5m", cmp.Or(d.invalid, d.String()))
	}
}
