package podpools

import (
	"context"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/podtargets"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/tenancy"
)

// poolWork processes the pools' queue until it shuts down.
func (p *Pools) poolWork(ctx context.Context) {
	work(p.queue, "Pod pool", func(ref objectref.Ref) (time.Duration, error) {
		p.mu.Lock()
		st := p.pools[ref]
		p.mu.Unlock()
		if st == nil {
			return 0, nil
		}
		_, err := p.sync(ctx, st, false)
		return 0, err
	})
}

// work processes q's items until it shuts down: one that fails is tried
// again, rate-limited; one process asks to look at again after a while
// is, then.
func work[K comparable](q workqueue.TypedRateLimitingInterface[K], what string, process func(K) (again time.Duration, err error)) {
	for {
		k, quit := q.Get()
		if quit {
			return
		}
		again, err := process(k)
		switch {
		case err != nil:
			klog.ErrorS(err, what, "item", k)
			q.AddRateLimited(k)
		case again > 0:
			q.Forget(k)
			q.AddAfter(k, again)
		default:
			q.Forget(k)
		}
		q.Done(k)
	}
}

// sync brings pool st to its Service's targets, or destroys it when
// nobody uses it: at once when now (a front-end waits for its first id)
// or when stale (its users wait for its id), else once its changes have
// settled. It returns the applied id.
func (p *Pools) sync(ctx context.Context, st *pool, now bool) (string, error) {
	st.apply.Lock()
	defer st.apply.Unlock()
	ref := st.port.Ref()
	p.mu.Lock()
	users, id, applied, appliedDelay, first, last, stale := len(st.users), st.id, st.targets, st.delay, st.first, st.last, st.stale
	p.mu.Unlock()
	if users == 0 {
		return "", p.destroy(ctx, st)
	}
	if id == "" {
		p.awaitSlices(ctx, st)
	}
	svc := p.service(st.port)
	targets, err := p.targets(ctx, st, svc)
	if err != nil {
		return "", err
	}
	delay := delayOf(svc)
	if id != "" && slices.Equal(targets, applied) && equalDelay(delay, appliedDelay) {
		p.settled(st, last)
		if stale {
			p.decided(st, id, targets, delay)
		}
		return id, nil
	}
	if !now && id != "" && !stale {
		if first.IsZero() {
			first, last = p.touch(st)
		}
		if due := p.opts.Settle.Due(first, last); p.now().Before(due) {
			p.queue.AddAfter(ref, due.Sub(p.now()))
			return id, nil
		}
	}
	ws, err := p.engine.PodPoolWorkspace(ref)
	if err != nil {
		return "", err
	}
	subj := p.review.PodPoolSubject(ref, svc, ws, records.KindChange)
	var got string
	_, err = p.review.Run(ctx, &subj, p.opts.Policy, func(rv engine.Review) (out *engine.Outcome, err error) {
		got, out, err = p.engine.ReconcilePodPool(ctx, lbmodel.PodPool{ServicePort: st.port, Targets: targets, Delay: delay}, rv)
		return out, err
	})
	if err != nil {
		return "", err
	}
	p.settled(st, last)
	if id == "" || stale {
		p.decided(st, got, targets, delay)
	} else {
		p.record(st, got, targets, delay)
	}
	return got, nil
}

// record keeps what was applied of st, and has the readiness gates of its
// Service looked at again.
func (p *Pools) record(st *pool, id string, targets []string, delay *time.Duration) {
	p.mu.Lock()
	st.id, st.targets, st.delay, st.stale = id, targets, delay, false
	p.mu.Unlock()
	p.gates.Add(serviceKey{st.port.Namespace, st.port.Service})
}

// decided records st as applied, new or no longer stale, and tells its
// users (OnApplied): a Gateway holding a route for it looks again.
func (p *Pools) decided(st *pool, id string, targets []string, delay *time.Duration) {
	p.record(st, id, targets, delay)
	p.tellApplied(st)
}

// touch marks st changed now; it returns when its unapplied changes
// began and last happened.
func (p *Pools) touch(st *pool) (first, last time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if st.first.IsZero() {
		st.first = now
	}
	st.last = now
	return st.first, st.last
}

// settled marks st's changes up to last applied; one made since stays.
func (p *Pools) settled(st *pool, last time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.last.Equal(last) {
		st.first, st.last = time.Time{}, time.Time{}
	}
}

// destroy destroys the workspace of pool st, which nobody uses, once
// it has been kept for Options.UnusedGrace (keptFor); the cloud refuses
// while a load balancer still forwards to it, and it is tried again.
func (p *Pools) destroy(ctx context.Context, st *pool) error {
	ref := st.port.Ref()
	p.mu.Lock()
	applied := st.id != ""
	p.mu.Unlock()
	if applied {
		if kept := p.keptFor(st); kept > 0 {
			p.queue.AddAfter(ref, kept)
			return nil
		}
		ws, err := p.engine.PodPoolWorkspace(ref)
		if err != nil {
			return err
		}
		subj := p.review.PodPoolSubject(ref, p.service(st.port), ws, records.KindDestroy)
		_, err = p.review.Run(ctx, &subj, p.opts.Policy, func(rv engine.Review) (*engine.Outcome, error) {
			return p.engine.DestroyPodPool(ctx, ref, rv)
		})
		if errors.Is(err, engine.ErrInUse) {
			p.queue.AddAfter(ref, p.opts.InUseRetry)
			return nil
		}
		if err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st.id, st.targets, st.stale = "", nil, false
	if len(st.users) == 0 && p.pools[ref] == st {
		delete(p.pools, ref)
	}
	return nil
}

// keptFor is how much longer unused pool st is kept: what is left of
// Options.UnusedGrace since its last user went, or of InUseRetry once
// its Service is gone (nobody comes back to it, but the apply that stops
// its last load balancer forwarding to it is likely still under way: a
// destroy now would meet the cloud's refusal); 0 destroys it now.
func (p *Pools) keptFor(st *pool) time.Duration {
	p.mu.Lock()
	since := st.unusedSince
	p.mu.Unlock()
	if since.IsZero() {
		return 0
	}
	keep := p.opts.UnusedGrace
	if p.service(st.port) == nil {
		keep = min(keep, p.opts.InUseRetry)
	}
	return max(since.Add(keep).Sub(p.now()), 0)
}

// delayOf is how long the pods leaving svc's pools drain: its
// deregistration-delay annotation, nil for the cluster's (also when svc
// is gone, or its annotations are refused: its own reconcile says so).
func delayOf(svc *corev1.Service) *time.Duration {
	if svc == nil {
		return nil
	}
	in := annotations.Read(svc)
	if in.Err != nil {
		return nil
	}
	return in.LB.DeregistrationDelay
}

func equalDelay(a, b *time.Duration) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// service is the Service of port, nil when it is gone.
func (p *Pools) service(port lbmodel.ServicePort) *corev1.Service {
	svc, err := p.services.Services(port.Namespace).Get(port.Service)
	if err != nil {
		return nil
	}
	return svc
}

// targets are pool st's targets now: its Service port's endpoints
// through the boundary (none once the Service or its port is gone). A
// refused address is told to the Service once.
func (p *Pools) targets(ctx context.Context, st *pool, svc *corev1.Service) ([]string, error) {
	if svc == nil {
		return nil, nil
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
		return sp.Port == st.port.Port && protocol(sp.Protocol) == protocol(st.port.Protocol)
	})
	if i < 0 {
		return nil, nil
	}
	eps, err := p.slicesOf(svc.Namespace, svc.Name)
	if err != nil {
		return nil, err
	}
	res, err := podtargets.For(svc, svc.Spec.Ports[i], eps, podtargets.Source{Pod: p.podIn(svc.Namespace), Allow: p.allow(ctx, svc)})
	if err != nil {
		return nil, err
	}
	p.tellRefused(st, svc, res.Refused)
	return res.Targets, nil
}

// allow is the tenant boundary's decision on an address svc's slices
// list: "" allows.
func (p *Pools) allow(ctx context.Context, svc *corev1.Service) func(ip string) (string, error) {
	from := objectref.Service(svc)
	return func(ip string) (string, error) {
		return p.auth.Refusal(ctx, from, tenancy.Reference{Kind: tenancy.PodTarget, Namespace: svc.Namespace, Name: ip})
	}
}

// tellRefused keeps the refused addresses of st's last decision and says
// each once to the Service, in its namespace, once it has been refused for
// Options.RefusedGrace (the pool is looked at again then): its pod may be
// on its way. Every refused address waits alike, whatever holds it: told
// sooner, another namespace's pod's IP would stand out from a free one.
func (p *Pools) tellRefused(st *pool, svc *corev1.Service, refused []podtargets.Refusal) {
	var fresh []podtargets.Refusal
	var again time.Duration
	now := p.now()
	p.mu.Lock()
	refusedAt := st.refusedAt
	st.refused, st.refusedAt = map[string]bool{}, map[string]time.Time{}
	for _, r := range refused {
		st.refused[r.Address] = true
		if st.said[r.Address] {
			continue
		}
		since, seen := refusedAt[r.Address]
		if !seen {
			since = now
		}
		st.refusedAt[r.Address] = since
		if left := since.Add(p.opts.RefusedGrace).Sub(now); left > 0 {
			if again == 0 || left < again {
				again = left
			}
			continue
		}
		st.said[r.Address] = true
		fresh = append(fresh, r)
	}
	p.mu.Unlock()
	if again > 0 {
		p.queue.AddAfter(st.port.Ref(), again)
	}
	if len(fresh) == 0 {
		return
	}
	subj := p.review.PodPoolSubject(st.port.Ref(), svc, "", records.KindChange)
	for _, r := range fresh {
		p.review.Eventf(subj, corev1.EventTypeWarning, "PodTargetRefused", "%s; it is no target of port %d/%s", r, st.port.Port, protocol(st.port.Protocol))
	}
}

func protocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// ignoreGone is err, nil when the object is gone.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
