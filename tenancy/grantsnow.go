package tenancy

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// The live read (Sources.GrantsNow) is a LIST on the API server, asked
// before each refusal a grant could lift. A tenant can make many: Services
// naming another namespace's group or address are decided for every
// member's reconcile, every look of the address keeper, every preview. So
// a namespace's live read is kept for GrantsNowTTL, and callers asking at
// once share one read: N refusals cost one LIST per namespace per TTL.
//
// What is given up: a grant created less than GrantsNowTTL after a kept
// read, and not yet delivered by the watch, gets the plain refusal rather
// than the Unread one. The watch's event reconciles the groups it concerns
// anyway, and the service controller retries a refused Service after more
// than GrantsNowTTL.

// GrantsNowTTL is how long a live read of a namespace's grants answers.
const GrantsNowTTL = time.Second

// grantsNowTimeout bounds a shared live read: it is not its first
// caller's, whose context may end before the others'.
const grantsNowTimeout = 10 * time.Second

// liveGrants keeps the live reads by namespace. The zero value is ready.
type liveGrants struct {
	flight singleflight.Group
	mu     sync.Mutex
	reads  map[string]liveRead
	// now is the clock (time.Now when nil): tests set it.
	now func() time.Time
}

// liveRead is one live read, made at at (when it started: it is at least
// as new as that).
type liveRead struct {
	at     time.Time
	grants []gatewayv1beta1.ReferenceGrant
	err    error
}

func (l *liveGrants) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// fresh is namespace's kept read if younger than GrantsNowTTL.
func (l *liveGrants) fresh(namespace string) (liveRead, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.reads[namespace]
	return r, ok && l.clock().Sub(r.at) < GrantsNowTTL
}

// keep stores r and drops the reads past their TTL (the map stays as
// small as the namespaces asked about in the last second).
func (l *liveGrants) keep(namespace string, r liveRead) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reads == nil {
		l.reads = map[string]liveRead{}
	}
	now := l.clock()
	for ns, old := range l.reads {
		if now.Sub(old.at) >= GrantsNowTTL {
			delete(l.reads, ns)
		}
	}
	l.reads[namespace] = r
}

// grantsNow is GrantsNow through the kept reads. A failed read is kept
// too (it says nothing: the plain refusal), or a failing API server would
// be asked once per refusal.
func (a *Authorizer) grantsNow(ctx context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error) {
	l := &a.live
	if r, ok := l.fresh(namespace); ok {
		return r.grants, r.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // a caller that may not wait starts no read
	}
	ch := l.flight.DoChan(namespace, func() (any, error) {
		// A read that ended between fresh and DoChan answers.
		if r, ok := l.fresh(namespace); ok {
			return r.grants, r.err
		}
		at := l.clock()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grantsNowTimeout)
		defer cancel()
		grants, err := a.GrantsNow(rctx, namespace)
		l.keep(namespace, liveRead{at: at, grants: grants, err: err})
		return grants, err
	})
	select {
	case res := <-ch:
		grants, _ := res.Val.([]gatewayv1beta1.ReferenceGrant)
		return grants, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
