package shard

import (
	"fmt"
	"hash/fnv"
)

// Of is the shard of key among n shards (n > 0).
func Of(key string, n int) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum64() % uint64(max(n, 1))) //nolint:gosec // n is positive, the result below it
}

// leaseName is the Lease of shard i of set prefix.
func leaseName(prefix string, i int) string { return fmt.Sprintf("%s-shard-%d", prefix, i) }

// memberName is the Lease a replica announces itself with: its identity
// hashed, since an identity (a pod name and a uid) may be longer than a
// name or hold other characters.
func memberName(prefix, identity string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(identity))
	return fmt.Sprintf("%s-replica-%016x", prefix, h.Sum64())
}

// rank orders shards for one replica (rendezvous hashing): replicas
// looking for free shards try different ones first, so they rarely race
// for the same Lease.
func rank(identity string, i int) uint64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s\x00%d", identity, i)
	return h.Sum64()
}
