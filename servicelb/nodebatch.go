package servicelb

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/example/cloud-provider-example/deregistration"
)

const (
	// nodeBatch is the quiet that ends a batch of node changes: a
	// rotation tainting many nodes, one API call after another, is one
	// wave and one apply of the pools, however slowly the calls come.
	nodeBatch = 500 * time.Millisecond
	// nodeBatchMost bounds a batch, so nodes that never go quiet (a
	// large cluster's churn) still get an apply this often.
	nodeBatchMost = 5 * time.Second
)

// nodeChanges gathers the node changes the pools decide from until the
// nodes go quiet (nodeBatch) or the batch is nodeBatchMost old.
type nodeChanges struct {
	mu sync.Mutex
	// first and last are the batch's first and last change; zero when
	// none waits.
	first, last time.Time
}

// changed records a change at now.
func (b *nodeChanges) changed(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first.IsZero() {
		b.first = now
	}
	b.last = now
}

// gathering is how long the batch still waits at now; 0 ends it: the
// apply about to run takes every change so far.
func (b *nodeChanges) gathering(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first.IsZero() {
		return 0
	}
	d := min(b.last.Add(nodeBatch).Sub(now), b.first.Add(nodeBatchMost).Sub(now))
	if d <= 0 {
		b.first, b.last = time.Time{}, time.Time{}
		return 0
	}
	return d
}

// poolsChange tells whether a node's update changes what the pools
// decide from (package deregistration and the selections): its labels,
// spec (taints, cordon, provider id), deletion or readiness; not a
// heartbeat.
func poolsChange(old, cur *v1.Node) bool {
	return !equality.Semantic.DeepEqual(old.Labels, cur.Labels) || !equality.Semantic.DeepEqual(old.Spec, cur.Spec) ||
		old.DeletionTimestamp.IsZero() != cur.DeletionTimestamp.IsZero() || deregistration.Ready(old) != deregistration.Ready(cur)
}
