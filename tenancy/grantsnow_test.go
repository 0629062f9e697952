package tenancy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
)

// countingLive is an authorizer (the watch has no grant) whose live read
// counts its reads by namespace, on a clock the test moves.
func countingLive(t *testing.T) (a *Authorizer, reads func(ns string) int, advance func(time.Duration)) {
	t.Helper()
	a = authorizer()
	var mu sync.Mutex
	n := map[string]int{}
	a.GrantsNow = func(_ context.Context, ns string) ([]gatewayv1beta1.ReferenceGrant, error) {
		mu.Lock()
		defer mu.Unlock()
		n[ns]++
		return nil, nil
	}
	now := time.Now()
	a.live.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	reads = func(ns string) int {
		mu.Lock()
		defer mu.Unlock()
		return n[ns]
	}
	advance = func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	return a, reads, advance
}

// joinRefused is Service name of team-b joining group of namespace ns
// without a grant: refused.
func joinRefused(t *testing.T, a *Authorizer, ctx context.Context, name, ns, group string) {
	t.Helper()
	from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: name}
	err := a.Authorize(ctx, from, []Reference{{Kind: Group, Annotation: annotations.LBGroup, Namespace: ns, Name: group}})
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Unread {
		t.Errorf("%s joining %s/%s without a grant: %v, want the plain refusal", name, ns, group, err)
	}
}

// Many Services naming another namespace's groups without its grant (one
// reconcile of that group decides them all) cost one live read of that
// namespace's grants per GrantsNowTTL, not one each; another namespace's
// is read for itself.
func TestLiveGrantsReadOncePerNamespacePerTTL(t *testing.T) {
	a, reads, advance := countingLive(t)
	for i := range 50 {
		joinRefused(t, a, t.Context(), fmt.Sprintf("web-%d", i), "team-a", fmt.Sprintf("front-%d", i%3))
	}
	if n := reads("team-a"); n != 1 {
		t.Fatalf("50 refusals within the TTL: %d live reads of team-a, want 1", n)
	}
	joinRefused(t, a, t.Context(), "web", "team-c", "front")
	if n := reads("team-c"); n != 1 {
		t.Errorf("another namespace's group: %d live reads of team-c, want 1", n)
	}
	advance(GrantsNowTTL - time.Millisecond)
	joinRefused(t, a, t.Context(), "web", "team-a", "front")
	if n := reads("team-a"); n != 1 {
		t.Errorf("just before the TTL: %d live reads of team-a, want 1", n)
	}
	advance(time.Millisecond)
	for i := range 50 {
		joinRefused(t, a, t.Context(), fmt.Sprintf("web-%d", i), "team-a", "front")
	}
	if n := reads("team-a"); n != 2 {
		t.Errorf("50 refusals after the TTL: %d live reads of team-a, want 2", n)
	}
}

// Callers asking at once while a live read is under way share it.
func TestLiveGrantsConcurrentCallersShareOneRead(t *testing.T) {
	a := authorizer()
	var n atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	a.GrantsNow = func(context.Context, string) ([]gatewayv1beta1.ReferenceGrant, error) {
		if n.Add(1) == 1 {
			close(started)
		}
		<-release
		return nil, nil
	}
	const callers = 20
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { joinRefused(t, a, t.Context(), fmt.Sprintf("web-%d", i), "team-a", "front") })
	}
	<-started
	time.Sleep(20 * time.Millisecond) // the others reach the read under way
	close(release)
	wg.Wait()
	if got := n.Load(); got != 1 {
		t.Errorf("%d concurrent refusals: %d live reads, want 1", callers, got)
	}
}

// A live read under way is not its first caller's: that caller's context
// ending fails neither the read nor the others waiting for it. A caller
// whose context is done starts no read, and is answered by a kept one.
func TestLiveGrantsOutliveTheirFirstCaller(t *testing.T) {
	a := authorizer()
	var n atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	a.GrantsNow = func(ctx context.Context, ns string) ([]gatewayv1beta1.ReferenceGrant, error) {
		if n.Add(1) == 1 {
			close(started)
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", "")}, nil
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	joinRefused(t, a, done, "web", "team-a", "front") // no read started
	if got := n.Load(); got != 0 {
		t.Fatalf("a caller that may not wait: %d live reads, want none", got)
	}

	first, cancelFirst := context.WithCancel(t.Context())
	firstDone := make(chan error)
	go func() {
		_, err := a.grantsNow(first, "team-a")
		firstDone <- err
	}()
	<-started
	var second error
	var wg sync.WaitGroup
	wg.Go(func() {
		from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web"}
		second = a.Authorize(t.Context(), from, []Reference{{Kind: Group, Annotation: annotations.LBGroup, Namespace: "team-a", Name: "front"}})
	})
	time.Sleep(20 * time.Millisecond)
	cancelFirst()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the first caller, its context ended: %v, want it to stop waiting", err)
	}
	close(release)
	wg.Wait()
	var refused *RefusedError
	if !errors.As(second, &refused) || !refused.Unread {
		t.Errorf("the second caller: %v, want the Unread refusal from the shared read", second)
	}
	// Kept: a caller that may not wait gets it.
	from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web"}
	if err := a.Authorize(done, from, []Reference{{Kind: Group, Annotation: annotations.LBGroup, Namespace: "team-a", Name: "front"}}); !errors.As(err, &refused) || !refused.Unread {
		t.Errorf("a caller that may not wait, a read kept: %v, want the Unread refusal", err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d live reads, want 1", got)
	}
}

// A refused address costs the same reads whatever it is (missing, made by
// hand, another cluster's, another namespace's without its grant): the
// grants read once and the live read of every namespace's, so neither the
// refusal's words nor its latency tell whether it is another tenant's;
// the same while the grants cannot be read.
func TestAddressRefusalsReadAlike(t *testing.T) {
	from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web"}
	for _, unreadable := range []bool{false, true} {
		a, reads, advance := countingLive(t)
		watchReads := 0
		a.Grants = func(context.Context, string) ([]gatewayv1beta1.ReferenceGrant, error) {
			watchReads++
			if unreadable {
				return nil, fmt.Errorf("list: %w", ErrGrantsUnreadable)
			}
			return nil, nil
		}
		var first *RefusedError
		for i, addr := range []string{"addr-missing", "addr-hand", "addr-stage", "addr-a", "198.51.100.1"} {
			advance(GrantsNowTTL) // each its own live read
			err := a.Authorize(t.Context(), from, []Reference{{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: addr}})
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("%s (unreadable %v): %v, want a refusal", addr, unreadable, err)
			}
			if first == nil {
				first = refused
			}
			if refused.Reason != first.Reason || refused.Unread != first.Unread {
				t.Errorf("%s (unreadable %v): %q (unread %v), want the words of the first: %q (unread %v)", addr, unreadable, refused.Reason, refused.Unread, first.Reason, first.Unread)
			}
			wantLive := i + 1
			if unreadable {
				wantLive = 0 // refused before any live read
			}
			if watchReads != i+1 || reads("") != wantLive || reads("team-a") != 0 {
				t.Errorf("%s (unreadable %v): %d grants reads, %d live reads of every namespace, %d of team-a; want %d, %d, 0",
					addr, unreadable, watchReads, reads(""), reads("team-a"), i+1, wantLive)
			}
		}
		if unreadable != first.Unread {
			t.Errorf("unreadable %v: refusals Unread %v", unreadable, first.Unread)
		}
	}
}

// An address's grant the watch has not delivered is found in the live
// read of every namespace's only in the owner's namespace.
func TestAddressLiveReadCountsTheOwnersGrants(t *testing.T) {
	from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web"}
	address := []Reference{{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: "addr-a"}}
	for _, c := range []struct {
		in     string
		unread bool
	}{{"team-a", true}, {"team-c", false}, {"team-b", false}} {
		a := authorizer()
		a.GrantsNow = func(context.Context, string) ([]gatewayv1beta1.ReferenceGrant, error) {
			return []gatewayv1beta1.ReferenceGrant{referenceGrant(c.in, "", "Service", "team-b", GrantGroup, GrantAddressKind, "")}, nil
		}
		err := a.Authorize(t.Context(), from, address)
		var refused *RefusedError
		if !errors.As(err, &refused) || refused.Unread != c.unread {
			t.Errorf("a grant not delivered yet in %s: %v, want Unread %v", c.in, err, c.unread)
		}
	}
}
