package servicelb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// A shared target pool carries the deregistration delay a load balancer
// asks for only once that load balancer's plan is applied, under its own
// review (approved where its policy says so): the ask is an output of its
// root module (engine.DelayOutput), so a changed ask is a planned
// change. A Service as it is written changes nothing shared: one the
// tenancy rules refuse, another controller's (loadBalancerClass), or one
// whose plan waits for approval asks nothing (docs/tenancy.md, effects).

// poolAsk is what one applied load balancer (a Service's own, or a
// group's) asks of its target pool.
type poolAsk struct {
	selection string
	// delay is nil when it asks the cluster's.
	delay *time.Duration
}

// poolAsks are the asks of every applied load balancer on a pool, by its
// object: bounded by the load balancers that exist, each forgotten when
// its load balancer leaves its pool or is destroyed.
type poolAsks struct {
	mu     sync.Mutex
	asks   map[objectref.Ref]poolAsk
	seeded bool
	// changed hears of every ask that changed: the pools follow.
	changed func()
}

// applied records what ref's load balancer, applied on the pool of
// selection sel, asks (delay nil: the cluster's).
func (a *poolAsks) applied(ref objectref.Ref, sel string, delay *time.Duration) {
	ask := poolAsk{selection: sel, delay: delay}
	a.mu.Lock()
	old, had := a.asks[ref]
	same := had && old.selection == ask.selection && equalDelay(old.delay, ask.delay)
	if !same {
		if a.asks == nil {
			a.asks = map[objectref.Ref]poolAsk{}
		}
		a.asks[ref] = ask
	}
	a.mu.Unlock()
	if !same && a.changed != nil {
		a.changed()
	}
}

// forget drops what ref asked: its load balancer is gone or forwards to
// its nodes itself.
func (a *poolAsks) forget(ref objectref.Ref) {
	a.mu.Lock()
	_, had := a.asks[ref]
	delete(a.asks, ref)
	a.mu.Unlock()
	if had && a.changed != nil {
		a.changed()
	}
}

func equalDelay(a, b *time.Duration) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// seed reads, once, what every load balancer applied before this process
// asks: its record's last apply (engine.DelayOutput), on the pool of
// its selection now (selection: "" and false when the object is gone),
// so that the pools are not planned from the asks of the load balancers
// reconciled so far after a restart.
func (a *poolAsks) seed(ctx context.Context, list func(context.Context) ([]*records.Record, error), selection func(objectref.Ref, []objectref.Ref) (string, bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seeded || list == nil {
		return
	}
	all, err := list(ctx)
	if err != nil {
		klog.ErrorS(err, "cannot read what the load balancers applied ask of their target pools; trying again at the next sync of the pools")
		return
	}
	if a.asks == nil {
		a.asks = map[objectref.Ref]poolAsk{}
	}
	for _, r := range all {
		if r.Applied == nil || r.Object.Kind != objectref.KindService && r.Object.Kind != objectref.KindServiceGroup {
			continue
		}
		if _, known := a.asks[r.Object]; known {
			continue // applied in this process already
		}
		if sel, ok := selection(r.Object, r.Members); ok {
			a.asks[r.Object] = poolAsk{selection: sel, delay: engine.AskedDelay(r.Applied.Outputs)}
		}
	}
	a.seeded = true
}

// poolDelay is the delay a pool drains for and who asks for it.
type poolDelay struct {
	delay time.Duration
	// askedBy are the load balancers asking delay with their annotation.
	askedBy []objectref.Ref
}

// poolDelays are the pools' delays by selection: the longest any applied
// load balancer on the pool asks (one without the annotation asks the
// cluster's). A load balancer can lengthen a shared pool's drain, never
// shorten it below what another asks.
type poolDelays map[string]poolDelay

// delays are the pools' delays now, cluster being the cluster's.
func (a *poolAsks) delays(cluster time.Duration) poolDelays {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := poolDelays{}
	for ref, ask := range a.asks {
		d := cluster
		if ask.delay != nil {
			d = *ask.delay
		}
		cur, ok := out[ask.selection]
		switch {
		case !ok || d > cur.delay:
			cur = poolDelay{delay: d}
			if ask.delay != nil {
				cur.askedBy = []objectref.Ref{ref}
			}
		case d == cur.delay && ask.delay != nil:
			cur.askedBy = append(cur.askedBy, ref)
		}
		out[ask.selection] = cur
	}
	return out
}

// of is selection's delay for rendering (nil: no applied load balancer
// asks anything of it, so the cluster's) and who asks for it.
func (p poolDelays) of(selection string) (*time.Duration, []string) {
	d, ok := p[selection]
	if !ok {
		return nil, nil
	}
	var by []string
	for _, r := range d.askedBy {
		by = append(by, r.Describe())
	}
	slices.Sort(by)
	return &d.delay, by
}

// carried says, for the pools' audit lines, every delay other than the
// cluster's that a pool carries and whose ask it is.
func (p poolDelays) carried(cluster time.Duration) []string {
	var out []string
	for sel, d := range p {
		if d.delay == cluster || len(d.askedBy) == 0 {
			continue
		}
		_, by := p.of(sel)
		out = append(out, fmt.Sprintf("pool %s: deregistration delay %s asked by %s", engine.PoolKey(sel), d.delay, strings.Join(by, ", ")))
	}
	slices.Sort(out)
	return out
}

// poolDelays are the pools' delays now, once what the load balancers
// applied before this process ask is known: until then (the records or
// the Service informer not read yet) an error, so that no pool is planned
// without the asks of load balancers not reconciled yet.
func (l *targetPools) poolDelays(ctx context.Context) (poolDelays, error) {
	if l.groups.services != nil && (l.servicesSynced == nil || l.servicesSynced()) {
		l.lifecycle.asks.seed(ctx, l.groups.records, l.currentSelection)
	}
	a := &l.lifecycle.asks
	a.mu.Lock()
	seeded := a.seeded || l.groups.records == nil
	a.mu.Unlock()
	if !seeded {
		return nil, fmt.Errorf("target pools: what the load balancers applied before ask of them is not read yet")
	}
	return a.delays(l.cfg.LoadBalancer.TargetPools.DeregistrationDelay.Duration), nil
}

// poolsReview is what a change of the pools starts from: its reconcile's
// review subject, carrying the deregistration delays, and those delays.
func (l *targetPools) poolsReview(ctx context.Context) (review.Subject, poolDelays, error) {
	_, j, err := l.engine.RenderTargetPools(nil)
	if err != nil {
		return review.Subject{}, nil, err
	}
	delays, err := l.poolDelays(ctx)
	if err != nil {
		return review.Subject{}, nil, err
	}
	subj := l.board.PoolsSubject(j.Key, records.KindChange).Carrying(delays.carried(l.cfg.LoadBalancer.TargetPools.DeregistrationDelay.Duration))
	return subj, delays, nil
}

// currentSelection is the node selection now of ref's load balancer: a
// Service's own, or a group's, whose primary is the first of members;
// false when that Service is gone (or another of its name) or has no
// pool.
func (l *targetPools) currentSelection(ref objectref.Ref, members []objectref.Ref) (string, bool) {
	if ref.Kind == objectref.KindServiceGroup {
		if len(members) == 0 {
			return "", false
		}
		ref = members[0]
	}
	obj, found, err := l.groups.services.GetByKey(ref.Namespace + "/" + ref.Name)
	svc, ok := obj.(*v1.Service)
	if err != nil || !found || !ok || ref.UID != "" && string(svc.UID) != ref.UID {
		return "", false
	}
	sel, ok, err := engine.Selection(annotations.Read(svc))
	return sel, err == nil && ok
}
