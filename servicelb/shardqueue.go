package servicelb

import (
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	servicehelper "k8s.io/cloud-provider/service/helpers"
)

// converged is, per Service, what its last converged EnsureLoadBalancer
// saw: the service controller's queue cannot be read per shard (its own
// workqueue metrics are one figure), so a shard's queue is counted as its
// Services not converged at their current spec and annotations.
type converged struct {
	mu sync.Mutex
	at map[types.UID]fingerprint
}

// fingerprint is what the service controller reconciles a Service
// again for: its spec (the generation) and its annotations.
type fingerprint struct {
	generation  int64
	annotations uint64
}

func fingerprintOf(svc *v1.Service) fingerprint {
	h := fnv.New64a()
	for _, k := range slices.Sorted(maps.Keys(svc.Annotations)) {
		_, _ = h.Write([]byte(k + "\x00" + svc.Annotations[k] + "\x00"))
	}
	return fingerprint{generation: svc.Generation, annotations: h.Sum64()}
}

// reconciled notes that svc converged as it is (sharded: a nil s counts
// nothing).
func (s *Shards) reconciled(svc *v1.Service) {
	if s != nil {
		s.feed.reconciled(svc)
	}
}

func (f *shardFeed) reconciled(svc *v1.Service) {
	f.converged.mu.Lock()
	defer f.converged.mu.Unlock()
	if f.converged.at == nil {
		f.converged.at = map[types.UID]fingerprint{}
	}
	f.converged.at[svc.UID] = fingerprintOf(svc)
}

// queueLengths are, per shard held, its Services waiting for the service
// controller: a load balancer not converged at the Service's current
// fingerprint, or one to delete (the Service goes, or stops being a load
// balancer, with the cleanup finalizer on). What it remembers of Services
// gone is dropped.
func (f *shardFeed) queueLengths(h Holder) map[int]int {
	s := f.shards
	out := map[int]int{}
	for i := range h.Held() {
		out[i] = 0
	}
	f.converged.mu.Lock()
	defer f.converged.mu.Unlock()
	seen := make(map[types.UID]bool, len(f.converged.at))
	for _, obj := range s.services.List() {
		svc, ok := obj.(*v1.Service)
		if !ok {
			continue
		}
		seen[svc.UID] = true
		i := s.shardOfService(svc, h.Shards())
		if _, held := out[i]; !held {
			continue
		}
		wants := svc.Spec.Type == v1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil && svc.DeletionTimestamp == nil
		at, ok := f.converged.at[svc.UID]
		switch {
		case wants && (!ok || at != fingerprintOf(svc)):
			out[i]++
		case !wants && servicehelper.HasLBFinalizer(svc):
			out[i]++
		}
	}
	for uid := range f.converged.at {
		if !seen[uid] {
			delete(f.converged.at, uid)
		}
	}
	return out
}

// countQueues sets the queue length gauge of every shard (0 for those
// another replica owns: its figure is on its own /metrics).
func (f *shardFeed) countQueues(h Holder) {
	s := f.shards
	if s.services == nil {
		return
	}
	lengths := f.queueLengths(h)
	for i := range h.Shards() {
		shardQueueLength.WithLabelValues(strconv.Itoa(i)).Set(float64(lengths[i]))
	}
}
