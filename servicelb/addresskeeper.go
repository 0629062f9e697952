package servicelb

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// addressResync is how often the leader looks at every address Services
// ask for again: a load balancer that became active, a freed cap.
const addressResync = time.Minute

// addressKeeper decides, on the leader only, which Service's load
// balancer holds each reserved address (ADR 0019), and converges the
// address's workspace to it: the holder keeps it while it asks for it;
// when it lets go, the oldest Service waiting with an active load
// balancer takes it, in one plan. Its queue holds wants (addressWant.key),
// from Service events and a periodic look at every Service.
type addressKeeper struct {
	*serviceQueue
	lb *addresses
	// releases decides the release requests (releases.go).
	releases *releaser
}

func newAddressKeeper(l *addresses, inf cache.SharedIndexInformer, leads func() bool) (*addressKeeper, error) {
	q, err := newServiceQueue("addresses", inf, leads, func(svc *v1.Service) (string, bool) {
		w, ok := l.wantOf(annotations.Read(svc))
		return w.key(), ok
	}, serviceEvents{changed: addressAsked, old: true, deleted: true})
	k := &addressKeeper{serviceQueue: q, lb: l}
	k.releases = newReleaser(k)
	return k, err
}

// run keeps the addresses until ctx ends.
func (k *addressKeeper) run(ctx context.Context) {
	go func() {
		t := time.NewTicker(addressResync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				k.askAll()
			}
		}
	}()
	work(ctx, k.queue, "Cannot converge a reserved address; retrying", k.sync)
}

// addressClaim is a Service asking for an address, with its load
// balancer as the cloud has it (nil: none yet).
type addressClaim struct {
	in *annotations.Service
	lb *exampleapi.LoadBalancer
}

// ready: the claim may take the address now.
func (c addressClaim) ready() bool {
	return c.lb != nil && c.lb.Status == exampleapi.LBStatusActive && !leaving(c.in.Service)
}

// takerOf decides who holds an address attached to load balancer
// attached ("" for none), among the claims, oldest first: the holder
// while it still asks (even leaving: its load balancer lets go when it
// is destroyed), else the oldest ready claim. wait says a claim not
// ready yet may take it later.
func takerOf(attached string, claims []addressClaim) (taker *addressClaim, wait bool) {
	for i := range claims {
		if c := &claims[i]; attached != "" && c.lb != nil && c.lb.ID == attached {
			return c, false
		}
	}
	for i := range claims {
		c := &claims[i]
		switch {
		case c.ready():
			return c, false
		case !leaving(c.in.Service):
			wait = true
		}
	}
	return nil, wait
}

// sync converges the address that key's want names.
func (k *addressKeeper) sync(ctx context.Context, key string) error {
	if !k.leads() {
		return nil
	}
	l := k.lb
	// One decision at a time on an address, the Gateways' too
	// (gatewayaddresses.go).
	l.decide.Lock()
	defer l.decide.Unlock()
	w := wantOfKey(key)
	a, err := l.findAddress(ctx, w)
	if err != nil {
		return err
	}
	ns, name, ok := addressOwner(w, a)
	if !ok {
		return nil // nothing here: each Service naming it says why
	}
	claims, err := k.claims(ctx, ns, name, a)
	if err != nil {
		return err
	}
	attached := ""
	if a != nil {
		attached = a.LoadBalancerID
	}
	taker, wait := takerOf(attached, claims)
	if wait {
		k.queue.AddAfter(key, provisioningRetry)
	}
	if taker == nil && attached == "" && k.releases.waits(ns, name) {
		return nil // its release waits: nothing to hold, and converging would supersede it
	}
	var from *annotations.Service
	if attached != "" {
		var gateway bool
		if from, gateway, err = k.heldBy(ctx, attached); err != nil {
			return err
		}
		if gateway {
			// A Gateway's: it lets go of it when it no longer names it
			// (gatewayaddresses.go); who waits takes it then.
			k.queue.AddAfter(key, addressResync)
			return nil
		}
		if handsOver(from, ns) {
			return nil // it goes with the load balancer (handover.go)
		}
	}
	_, exists, err := l.engine.GetAddress(ctx, ns, name)
	if err != nil {
		return err
	}
	switch {
	case taker == nil && (a == nil || !exists):
		// Nobody takes it, and no workspace of ours holds it.
		return nil
	case a == nil:
		full, n, err := l.addressCap(ctx, ns)
		if err != nil {
			return err
		}
		if full {
			subj := l.board.ServiceSubject(ctx, taker.in, records.KindChange)
			l.board.Eventf(subj, v1.EventTypeWarning, "AddressCapReached", "%v", l.capError(taker.in.Service, n))
			k.queue.AddAfter(key, addressResync)
			return nil
		}
	}
	return k.converge(ctx, key, ns, name, a, exists, taker, claims, from)
}

// converge applies the address's workspace: held by taker's load
// balancer (nil: detached), importing the cloud's address a when no
// workspace of ours holds it yet; from is the Service whose load balancer
// holds it now (nil: none, or none known).
func (k *addressKeeper) converge(ctx context.Context, key, ns, name string, a *exampleapi.Address, exists bool,
	taker *addressClaim, claims []addressClaim, from *annotations.Service) error {
	l := k.lb
	addr := specOf(ns, name, a, exists)
	var takerIn *annotations.Service
	if taker != nil {
		takerIn = taker.in
		addr.LoadBalancerID, addr.Holder = taker.lb.ID, objectref.Service(taker.in.Service).Describe()
	}
	involved := make([]*annotations.Service, 0, len(claims)+1)
	for _, c := range claims {
		involved = append(involved, c.in)
	}
	moving := a != nil && a.LoadBalancerID != "" && (taker == nil || taker.lb.ID != a.LoadBalancerID)
	if !moving {
		from = nil
	}
	if from != nil {
		// The Service letting go caused the move as much as the taker.
		involved = append(involved, from)
	}
	pol := movePolicy(l.policy(annotations.LoadBalancer{}), ns, taker, claims, from)
	err := l.apply(ctx, addr, pol, func(workspace string) review.Subject {
		return l.board.AddressSubject(ctx, ns, name, workspace, takerIn, involved, records.KindChange)
	})
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait), errors.As(err, &denied):
		k.queue.AddAfter(key, approvalRetry)
		return nil
	case err != nil:
		return fmt.Errorf("address %s/%s: %w", ns, name, err)
	}
	klog.V(2).InfoS("Reserved address converged", "namespace", ns, "address", name, "holder", addr.Holder)
	return nil
}

// specOf is reserved address ns/name as its workspace is to hold it,
// held by none yet: a, the cloud's (nil: not reserved yet), is imported
// when no workspace of ours holds it (exists false).
func specOf(ns, name string, a *exampleapi.Address, exists bool) engine.AddressSpec {
	addr := engine.AddressSpec{Namespace: ns, Name: name}
	if a != nil {
		addr.Family = a.Family
		if !exists {
			addr.ImportID = a.ID
		}
	}
	return addr
}

// apply converges the workspace of reserved address addr under policy
// pol, reviewed as subject (given the workspace's key) says; its error is
// Run's (an *engine.AwaitingApprovalError while the plan waits).
func (l *addresses) apply(ctx context.Context, addr engine.AddressSpec, pol annotations.ApplyPolicy, subject func(workspace string) review.Subject) error {
	_, j, err := l.engine.RenderAddress(addr)
	if err != nil {
		return err
	}
	subj := subject(j.Key)
	_, err = l.board.Run(ctx, &subj, pol, func(rv engine.Review) (*engine.Outcome, error) {
		_, out, err := l.engine.ReconcileAddress(ctx, addr, rv)
		return out, err
	})
	return err
}

// claims are the Services asking for address ns/name (a: the cloud's, nil
// when not reserved yet) and allowed to, oldest first, each with its load
// balancer. A Service refused by the authorization is left out: its own
// reconcile says why.
func (k *addressKeeper) claims(ctx context.Context, ns, name string, a *exampleapi.Address) ([]addressClaim, error) {
	l := k.lb
	var out []addressClaim
	for _, obj := range k.store.List() {
		svc, ok := obj.(*v1.Service)
		if !ok {
			continue
		}
		in := annotations.Read(svc)
		w, ok := l.wantOf(in)
		if !ok || !w.names(ns, name, a) {
			continue
		}
		if err := l.refs.authorize(ctx, in); err != nil {
			klog.V(2).InfoS("Not a claim on the address: refused", "service", klog.KObj(svc), "address", ns+"/"+name, "reason", err)
			continue
		}
		lb, err := l.cloudLoadBalancer(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, addressClaim{in: in, lb: lb})
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := out[i].in.CreationTimestamp, out[j].in.CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return out[i].in.Namespace+"/"+out[i].in.Name < out[j].in.Namespace+"/"+out[j].in.Name
	})
	return out, nil
}

// movePolicy is the apply policy of the plan of address ns/name: the
// stricter of the cluster's (cluster), of the taker's and every Service of
// the address's own namespace asking for it (claims), and of the one
// letting go of it (from, nil for none): the holder's manual or plan-only
// holds the move of its address as it holds its own changes. A guest
// granted the address that waits governs nothing of the owner's: its
// plan-only would freeze every plan of the owner's address. A holder
// whose annotations cannot be read (it lets go for that) counts as
// manual: its policy is not known, so a person decides.
func movePolicy(cluster annotations.ApplyPolicy, ns string, taker *addressClaim, claims []addressClaim, from *annotations.Service) annotations.ApplyPolicy {
	pol := cluster
	for _, c := range claims {
		if c.in.Namespace == ns || taker != nil && c.in.UID == taker.in.UID {
			pol = annotations.Stricter(pol, c.in.LB.ApplyPolicy)
		}
	}
	switch {
	case from == nil:
	case from.Err != nil:
		pol = annotations.Stricter(pol, annotations.ApplyManual)
	default:
		pol = annotations.Stricter(pol, from.LB.ApplyPolicy)
	}
	return pol
}

// heldBy is the Service (from the informer) whose load balancer lbID is,
// nil when none is known (a load balancer gone, or of no Service here),
// or tells that it is a Gateway's (this cluster's); an error when the
// cloud cannot tell: the move's review and the hand-over's hands-off
// depend on it.
func (k *addressKeeper) heldBy(ctx context.Context, lbID string) (*annotations.Service, bool, error) {
	lb, err := k.lb.api.GetLoadBalancer(ctx, lbID)
	switch {
	case exampleapi.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read load balancer %s, which holds a reserved address: %w", lbID, err)
	}
	if k.lb.gateways(lb) {
		return nil, true, nil
	}
	uid := lb.Tags[exampleapi.TagServiceUID]
	for _, obj := range k.store.List() {
		if svc, ok := obj.(*v1.Service); ok && uid != "" && string(svc.UID) == uid {
			return annotations.Read(svc), false, nil
		}
	}
	return nil, false, nil
}
