// Package shard spreads the controller's objects over its replicas with
// Kubernetes Leases (docs/adr/0017-shards-owned-by-leases.md).
//
// Every workspace key hashes into one of a fixed number of shards (Of); a
// load balancer group's members hash by the group's key, so a group is
// always one replica's. Each shard is a Lease in the controller's
// namespace, and each replica announces itself with a Lease of its own,
// so every replica counts the live ones and holds its fair share of the
// shards: ceil(shards / replicas). A replica that holds more than its
// share gives the extra back (a joining replica takes them); one that
// holds fewer takes shards that are free or whose holder stopped renewing.
// Lease expiry is the failover.
//
// Expiry is judged on each replica's own clock, from when it last saw a
// Lease change (as client-go's leader election does), never from the
// times another replica wrote, so clocks need not agree. A replica owns a
// shard (Owns) only while its last renewal is younger than the lease
// duration less a margin; it stops before anyone else may start.
//
// Files: shard.go hashes keys and names the Leases; decide.go is what a
// replica does with what it sees (pure: tested without an API server);
// leases.go reads and writes the Leases; holder.go runs the loop; owners.go
// reads who holds what, for those who only look (examplectl status).
package shard
