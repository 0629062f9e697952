package review

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// A kept reserved address is released for good only on a verified
// person's request (AddressRelease, docs/addresses.md): a destroy plan of
// its workspace whose author is the requester, so that another reviewer
// approves it. The leader's releaser (servicelb) decides whether it may.

// AddressReleases are the release requests, oldest first: those whose
// requester the API server verified, and the stale ones, for the releaser
// to refuse; an error while the admission policy that verifies them is
// missing.
func (b *Board) AddressReleases(ctx context.Context) (Requests[reviewapi.AddressRelease], error) {
	return b.approvals.releases(ctx)
}

// AddressReleaseSubject is the release of reserved address ns/name
// (workspace's) that reqs ask for: a destroy made by every requester,
// whose events go to the record's ConfigMap.
func (b *Board) AddressReleaseSubject(ns, name, workspace string, reqs []*reviewapi.AddressRelease) Subject {
	s := Subject{ref: objectref.Address(ns, name), kind: records.KindDestroy, event: b.recordObject(workspace), asked: true}
	for _, r := range reqs {
		s.contrib = s.contrib.Add(records.Contributors{Authors: []string{r.Spec.Requester}})
	}
	return s
}

// WaitingChange is the id of the change plan of workspace awaiting
// approval ("" when none): a move or an attach that a release must not
// supersede.
func (b *Board) WaitingChange(ctx context.Context, workspace string) (string, error) {
	if b.store == nil {
		return "", nil
	}
	r, err := b.store.Get(ctx, workspace)
	if err != nil || r == nil {
		return "", err
	}
	if p := r.AwaitingDestroy(false); p != nil {
		return p.ID, nil
	}
	return "", nil
}

// ReleaseTaken writes, once per request, the audit line of release r
// taken up: its plan follows.
func (b *Board) ReleaseTaken(s Subject, r *reviewapi.AddressRelease) {
	if b.once("release\x00" + r.UID) {
		b.auditRelease(s, r, r.Spec.Requester, "taken")
	}
}

// ReleaseWaits tells, once per reason, that release request r is not
// decided yet and why (what the decision reads cannot be read now: the
// Gateways, the cloud): a Normal event, since the request is kept and
// looked at again, and no audit line, since nothing was decided. reason
// is why without what differs at every look (the cloud's request ids:
// exampleapi.Unstamped), so that one failure is said once.
func (b *Board) ReleaseWaits(s Subject, r *reviewapi.AddressRelease, why, reason string) {
	if b.once("release-waits\x00" + r.UID + "\x00" + reason) {
		b.eventf(s, v1.EventTypeNormal, "ReleaseWaits", "AddressRelease %s by %q: %s is not decided yet: %s; it is looked at again", r.Name, r.Spec.Requester, s.ref.Describe(), why)
	}
}

// ReleaseEnded uses up release request r: refused (why set) it says so
// in a Warning event and an audit line; else its plan was applied or
// denied, which the plan's own report said.
func (b *Board) ReleaseEnded(ctx context.Context, s Subject, r *reviewapi.AddressRelease, why string) {
	if why != "" {
		b.eventf(s, v1.EventTypeWarning, "ReleaseRefused", "AddressRelease %s by %q: %s is not released: %s", r.Name, r.Spec.Requester, s.ref.Describe(), why)
		b.auditRelease(s, r, r.Spec.Requester, "refused: "+why)
	}
	b.approvals.remove(ctx, reviewapi.AddressReleases, r.Name)
}

// ReleaseStale uses up release request r, made before the admission
// policy that verifies requesters was in force (why): refused, saying so.
// The requester it names was never checked: the controller is the actor
// of the audit line, the name only reported.
func (b *Board) ReleaseStale(ctx context.Context, s Subject, r *reviewapi.AddressRelease, why string) {
	b.eventf(s, v1.EventTypeWarning, "ReleaseRefused", "AddressRelease %s, naming %q as its requester: %s is not released: %s; ask again", r.Name, r.Spec.Requester, s.ref.Describe(), why)
	b.auditRelease(s, r, b.self, "refused: "+why)
	b.approvals.remove(ctx, reviewapi.AddressReleases, r.Name)
}

// auditRelease appends the line of release request r, by actor (its
// requester, or the controller for one whose requester is unchecked,
// which is then named apart).
func (b *Board) auditRelease(s Subject, r *reviewapi.AddressRelease, actor, outcome string) {
	if b.audit == nil {
		return
	}
	e := audit.Entry{Time: time.Now(), Action: audit.ActionRelease, Object: s.String(), Actor: actor, Outcome: outcome,
		Details: map[string]string{"request": r.Name}}
	if actor != r.Spec.Requester {
		e.Details["uncheckedRequester"] = r.Spec.Requester
	}
	if r.Spec.Comment != "" {
		e.Details["comment"] = r.Spec.Comment
	}
	if err := b.audit.Write(e); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}
