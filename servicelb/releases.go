package servicelb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// A kept reserved address is released for good only when a reviewer asks
// (AddressRelease, examplectl release) and another approves the destroy
// of its workspace (docs/addresses.md): the IP goes back to the region,
// and whoever reserves next may get it. The leader takes the requests up
// under addresses.decide, so a release and a move are never decided at
// once.

// releaseLook is how often the leader looks at the release requests: a
// new one, or an approval of a release waiting for it.
const releaseLook = approvalRetry

// runReleases takes the release requests up until ctx ends.
func (k *addressKeeper) runReleases(ctx context.Context) {
	wait.UntilWithContext(ctx, k.releaseAll, releaseLook)
}

// releaseAll takes up every verified release request, oldest first.
func (k *addressKeeper) releaseAll(ctx context.Context) {
	if !k.leads() {
		return
	}
	reqs, err := k.lb.board.AddressReleases(ctx)
	if err != nil {
		klog.ErrorS(err, "Release requests not taken up")
		return
	}
	for _, r := range reqs {
		if err := k.release(ctx, r); err != nil {
			klog.ErrorS(err, "Cannot release a reserved address; retrying", "request", r.Name)
		}
	}
}

// release takes up request r: refused when the address may not go
// (releaseBlocked), else the destroy of its workspace, planned under the
// cluster's policy and at least manual review, the requester its author;
// the request is kept while the plan waits.
func (k *addressKeeper) release(ctx context.Context, r *reviewapi.AddressRelease) error {
	l := k.lb
	ns, name := r.Spec.Address.Namespace, r.Spec.Address.Name
	l.decide.Lock()
	defer l.decide.Unlock()
	_, j, err := l.engine.RenderAddress(engine.AddressSpec{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	subj := l.board.AddressReleaseSubject(ns, name, j.Key, r)
	why, err := k.releaseBlocked(ctx, ns, name, j.Key)
	if err != nil {
		return err
	}
	if why != "" {
		l.board.ReleaseEnded(ctx, subj, r, why)
		return nil
	}
	l.board.ReleaseTaken(subj, r)
	// Irreversible: never without a second person, whatever the cluster's
	// policy (its plan-only still holds every plan).
	pol := annotations.Stricter(l.policy(annotations.LoadBalancer{}), annotations.ApplyManual)
	_, err = l.board.Run(ctx, &subj, pol, func(rv engine.Review) (*engine.Outcome, error) {
		return l.engine.ReleaseAddress(ctx, ns, name, rv)
	})
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait):
		return nil // looked at again at the next look
	case errors.As(err, &denied):
		// Its report said which rule denies it.
	case err != nil:
		return fmt.Errorf("release %s: %w", objectref.Address(ns, name).Describe(), err)
	default:
		klog.InfoS("Reserved address released", "namespace", ns, "address", name, "requester", r.Spec.Requester)
	}
	l.board.ReleaseEnded(ctx, subj, r, "")
	return nil
}

// releaseBlocked says why reserved address ns/name (workspace's) may not
// be released now, "" when it may: no workspace of the controller keeps
// it; a load balancer holds it; a Service allowed to names it (one the
// tenancy check refuses cannot stall another team's release); or a plan
// attaching or moving it waits for approval (a Gateway's, a holder's
// review), which a destroy would supersede.
func (k *addressKeeper) releaseBlocked(ctx context.Context, ns, name, workspace string) (string, error) {
	l := k.lb
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
	claims, err := k.claims(ctx, ns, name, a)
	if err != nil {
		return "", err
	}
	if len(claims) > 0 {
		names := make([]string, 0, len(claims))
		for _, c := range claims {
			names = append(names, objectref.Service(c.in.Service).Describe())
		}
		return strings.Join(names, ", ") + " names it", nil
	}
	if id, err := l.board.WaitingChange(ctx, workspace); err != nil || id != "" {
		return fmt.Sprintf("its plan %s, attaching or moving it, awaits approval", id), err
	}
	return "", nil
}
