package servicelb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/reviewapi"
)

// A kept reserved address is released for good only when a reviewer asks
// (AddressRelease, examplectl release) and another approves the destroy
// of its workspace (docs/addresses.md): the IP goes back to the region,
// and whoever reserves next may get it. The leader takes the requests up
// under addresses.decide, so a release and a move are never decided at
// once, and a destroy waits only while a request asks for it.

// releaseLook is how often the leader looks at the release requests: a
// new one, or an approval of a release waiting for it.
const releaseLook = approvalRetry

// releaser decides the release requests on the leader, beside the
// address keeper k, whose claims it reads. Under addresses.decide it
// keeps the addresses (ns/name) whose destroy waits for approval, which
// the keeper leaves alone while nobody takes them (a Service the tenancy
// check refuses would otherwise supersede it at every look); read is
// whether the records were read for those an earlier leader left.
type releaser struct {
	k       *addressKeeper
	waiting map[string]bool
	read    bool
}

func newReleaser(k *addressKeeper) *releaser {
	return &releaser{k: k, waiting: map[string]bool{}}
}

// run takes the release requests up until ctx ends.
func (rl *releaser) run(ctx context.Context) {
	wait.UntilWithContext(ctx, rl.all, releaseLook)
}

// all decides every address asked for, oldest request first, once
// for all of its requests; a destroy waiting for an address nobody asks
// for any more (its requests deleted) is withdrawn.
func (rl *releaser) all(ctx context.Context) {
	if !rl.k.leads() {
		return
	}
	reqs, err := rl.k.lb.board.AddressReleases(ctx)
	if err != nil {
		klog.ErrorS(err, "Release requests not taken up")
		return
	}
	for _, r := range reqs.Stale {
		if err := rl.refuseStale(ctx, r, reqs.Why); err != nil {
			klog.ErrorS(err, "Cannot refuse a release request; retrying", "request", r.Name)
		}
	}
	var order []string
	asked := map[string][]*reviewapi.AddressRelease{}
	for _, r := range reqs.Verified {
		key := r.Spec.Address.Namespace + "/" + r.Spec.Address.Name
		if asked[key] == nil {
			order = append(order, key)
		}
		asked[key] = append(asked[key], r)
	}
	for _, key := range order {
		if err := rl.release(ctx, asked[key]); err != nil {
			klog.ErrorS(err, "Cannot release a reserved address; retrying", "address", key)
		}
	}
	for _, key := range rl.pending(ctx) {
		if asked[key] == nil {
			if err := rl.unasked(ctx, key); err != nil {
				klog.ErrorS(err, "Cannot withdraw the release of a reserved address; retrying", "address", key)
			}
		}
	}
}

// refuseStale refuses release request r, made before the admission
// policy that verifies requesters was in force (why): it could name
// anyone, so it counts for nothing; a release it asked for that waits is
// withdrawn as nobody's ask any more (all).
func (rl *releaser) refuseStale(ctx context.Context, r *reviewapi.AddressRelease, why string) error {
	ns, name := r.Spec.Address.Namespace, r.Spec.Address.Name
	_, j, err := rl.k.lb.engine.RenderAddress(engine.AddressSpec{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	rl.k.lb.board.ReleaseStale(ctx, rl.k.lb.board.AddressReleaseSubject(ns, name, j.Key, nil), r, why)
	return nil
}

// unasked withdraws the waiting release of address key (ns/name), whose
// requests were deleted.
func (rl *releaser) unasked(ctx context.Context, key string) error {
	rl.k.lb.decide.Lock()
	defer rl.k.lb.decide.Unlock()
	ns, name, _ := strings.Cut(key, "/")
	_, j, err := rl.k.lb.engine.RenderAddress(engine.AddressSpec{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	return rl.withdraw(ctx, ns, name, rl.k.lb.board.AddressReleaseSubject(ns, name, j.Key, nil), nil, "")
}

// release decides reqs, the requests for one address: refused when it
// may not go (blocked), or under a plan-only policy, which would
// hold the destroy for ever; else the destroy of its workspace, planned
// under the cluster's policy and at least manual review, every requester
// its author. The requests are kept while the plan waits.
func (rl *releaser) release(ctx context.Context, reqs []*reviewapi.AddressRelease) error {
	l := rl.k.lb
	ns, name := reqs[0].Spec.Address.Namespace, reqs[0].Spec.Address.Name
	l.decide.Lock()
	defer l.decide.Unlock()
	_, j, err := l.engine.RenderAddress(engine.AddressSpec{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	subj := l.board.AddressReleaseSubject(ns, name, j.Key, reqs)
	why, err := rl.blocked(ctx, ns, name, j.Key)
	if err != nil {
		// Kept, looked at again; said to whoever asked, who would
		// otherwise see nothing (the Gateways unread, the cloud down).
		for _, r := range reqs {
			l.board.ReleaseWaits(subj, r, err.Error(), exampleapi.Unstamped(err))
		}
		return err
	}
	// Irreversible: never without a second person, whatever the cluster's
	// policy.
	pol := annotations.Stricter(l.policy(annotations.LoadBalancer{}), annotations.ApplyManual)
	if why == "" && pol == annotations.ApplyPlanOnly {
		why = "the cluster's apply policy is plan-only: nothing is applied"
	}
	if why != "" {
		return rl.withdraw(ctx, ns, name, subj, reqs, why)
	}
	for _, r := range reqs {
		l.board.ReleaseTaken(subj, r)
	}
	_, err = l.board.Run(ctx, &subj, pol, func(rv engine.Review) (*engine.Outcome, error) {
		return l.engine.ReleaseAddress(ctx, ns, name, rv)
	})
	var awaiting *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &awaiting):
		rl.waiting[ns+"/"+name] = true
		return nil // looked at again at the next look
	case errors.As(err, &denied):
		// Its report said which rule denies it.
	case err != nil:
		return fmt.Errorf("release %s: %w", objectref.Address(ns, name).Describe(), err)
	default:
		klog.InfoS("Reserved address released", "namespace", ns, "address", name, "requests", len(reqs))
	}
	delete(rl.waiting, ns+"/"+name)
	for _, r := range reqs {
		l.board.ReleaseEnded(ctx, subj, r, "")
	}
	return nil
}

// withdraw refuses reqs (why) and supersedes the destroy of address
// ns/name if one waits (reqs nil: its requests were deleted), reported
// as subj, under addresses.decide.
func (rl *releaser) withdraw(ctx context.Context, ns, name string, subj review.Subject, reqs []*reviewapi.AddressRelease, why string) error {
	l := rl.k.lb
	if rl.waiting[ns+"/"+name] {
		out, err := l.engine.WithdrawRelease(ctx, ns, name)
		l.board.Report(ctx, subj, out, err)
		if err != nil {
			return err
		}
		delete(rl.waiting, ns+"/"+name)
	}
	for _, r := range reqs {
		l.board.ReleaseEnded(ctx, subj, r, why)
	}
	return nil
}

// pending are the addresses whose destroy waits: as this leader
// planned them, and, read once, as the records of an earlier one say.
func (rl *releaser) pending(ctx context.Context) []string {
	l := rl.k.lb
	l.decide.Lock()
	defer l.decide.Unlock()
	if !rl.read {
		recs, err := l.board.Records(ctx)
		if err != nil {
			klog.ErrorS(err, "Cannot read the records for releases left waiting; reading them again at the next look")
		} else {
			rl.read = true
			for _, rec := range recs {
				if rec.Object.Kind == objectref.KindAddress && rec.AwaitingDestroy(true) != nil {
					rl.waiting[rec.Object.Namespace+"/"+rec.Object.Name] = true
				}
			}
		}
	}
	out := make([]string, 0, len(rl.waiting))
	for key := range rl.waiting {
		out = append(out, key)
	}
	return out
}

// waits tells the keeper that address ns/name's release waits (under
// addresses.decide).
func (rl *releaser) waits(ns, name string) bool {
	return rl.waiting[ns+"/"+name]
}

// blocked says why reserved address ns/name (workspace's) may not be
// released now, "" when it may: no workspace of the controller keeps it;
// a load balancer holds it; a Service or Gateway allowed to names it (one
// the tenancy check refuses cannot stall another team's release); or a
// plan attaching or moving it waits for approval (a Gateway's, a
// holder's review), which a destroy would supersede.
func (rl *releaser) blocked(ctx context.Context, ns, name, workspace string) (string, error) {
	l := rl.k.lb
	if _, exists, err := l.engine.GetAddress(ctx, ns, name); err != nil || !exists {
		return "the controller keeps no such reserved address (never reserved, released already, or handed over)", err
	}
	a, err := l.findAddress(ctx, addressWant{Namespace: ns, Name: name})
	if err != nil {
		return "", err
	}
	if a != nil && a.LoadBalancerID != "" {
		return fmt.Sprintf("load balancer %s holds it (%s, %s): it is released only once detached", a.LoadBalancerID, a.ID, a.IP), nil
	}
	claims, err := rl.k.claims(ctx, ns, name, a)
	if err != nil {
		return "", err
	}
	gws, err := rl.gatewaysNaming(ctx, a)
	if err != nil {
		return "", err
	}
	if len(claims)+len(gws) > 0 {
		names := make([]string, 0, len(claims)+len(gws))
		for _, c := range claims {
			names = append(names, objectref.Service(c.in.Service).Describe())
		}
		for _, gw := range gws {
			names = append(names, gw.Describe())
		}
		return strings.Join(names, ", ") + " names it", nil
	}
	if id, err := l.board.WaitingChange(ctx, workspace); err != nil || id != "" {
		return fmt.Sprintf("its plan %s, attaching or moving it, awaits approval", id), err
	}
	return "", nil
}

// gatewaysNaming are the Gateways naming address a (the cloud's; nil:
// none can) that the tenancy check lets take it: one it refuses cannot
// stall another team's release. None without a Gateway front-end; while
// it has not read the Gateways, an error, and the release is decided at
// a later look.
func (rl *releaser) gatewaysNaming(ctx context.Context, a *exampleapi.Address) ([]objectref.Ref, error) {
	l := rl.k.lb
	n := l.named.Load()
	if a == nil || n == nil {
		return nil, nil
	}
	named, err := (*n).NamedAddresses()
	if err != nil {
		return nil, err
	}
	var out []objectref.Ref
	for gw, refs := range named {
		for _, ref := range refs {
			if !(addressWant{Ref: ref}).names("", "", a) {
				continue
			}
			no, err := l.gatewayRefused(ctx, gw, ref)
			switch {
			case err != nil:
				return nil, err
			case no != "":
				klog.V(2).InfoS("Not a claim on the address: refused", "gateway", gw.Describe(), "address", a.ID, "reason", no)
			default:
				out = append(out, gw)
			}
		}
	}
	slices.SortFunc(out, func(x, y objectref.Ref) int { return strings.Compare(x.Describe(), y.Describe()) })
	return slices.Compact(out), nil
}
