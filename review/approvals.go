package review

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// policyCheckTTL is how long a check that the admission policies are
// installed is trusted: short, since an approval made while a policy is
// gone was never checked; the check is two GETs, made only while
// approvals are decided.
const policyCheckTTL = 5 * time.Second

// approvals reads the PlanApprovals and StateUnlocks of the controller's
// namespace (an informer's cache) and decides what they amount to. Only
// objects whose identity the API server checked count: the admission
// policy reviewapi.AdmissionPolicy must be installed and bound.
type approvals struct {
	namespace string
	required  int
	// propagation is how long after a policy was written its checks are
	// not relied on (review.approvals.policyPropagation).
	propagation time.Duration
	client      kubernetes.Interface
	dyn         dynamic.Interface
	plans       cache.GenericLister
	unlocks     cache.GenericLister
	released    cache.GenericLister // the AddressReleases

	mu      sync.Mutex
	checked map[string]policyCheck // by admission policy name

	// edits keeps the API server's answer to whether an approver may edit
	// an input, per plan (editKey): a waiting plan is looked at every few
	// seconds, and without it each look asked again, up to 3 verbs for
	// each of a pod pool's 9 inputs for each approver.
	edits *utilcache.LRUExpireCache
}

// editsSize bounds the answers kept: a few hundred approvers of waiting
// plans; one evicted is asked again.
const editsSize = 4096

// How long an answer is kept. Allowed (the approval is not counted) for
// as long as its plan is likely to wait: it fails closed. Not allowed
// only briefly, as the API server's webhook authorizer keeps a denial: an
// RBAC binding made just before the change may reach the API server that
// answers only after the first look.
const (
	editAllowedTTL = 10 * time.Minute
	editDeniedTTL  = 30 * time.Second
)

// editKey names one answer. It is one plan's (planKey): whether an
// approver may have made a plan's change is asked of the plan, and a
// plan made again from the same change (the same id, a new plan) asks
// again.
type editKey struct {
	plan, who, groups string
	in                records.Input
}

// planKey names plan p among the plans of every object: its id is a hash
// of what it changes, which another plan may reach again later.
func planKey(p *engine.Plan) string {
	return p.ID + "@" + p.Created.UTC().Format(time.RFC3339Nano)
}

type policyCheck struct {
	at  time.Time
	err error
	// since is when the policy or its binding was last created or
	// changed: an object made before was not checked by this policy.
	since time.Time
}

func newApprovals(namespace string, required int, propagation time.Duration) *approvals {
	return &approvals{namespace: namespace, required: required, propagation: propagation, checked: map[string]policyCheck{},
		edits: utilcache.NewLRUExpireCache(editsSize)}
}

// start watches the namespace's approvals, unlock and release requests.
func (a *approvals) start(client kubernetes.Interface, dyn dynamic.Interface, stop <-chan struct{}) {
	a.client, a.dyn = client, dyn
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, a.namespace, nil)
	a.plans = f.ForResource(reviewapi.PlanApprovals).Lister()
	a.unlocks = f.ForResource(reviewapi.StateUnlocks).Lister()
	a.released = f.ForResource(reviewapi.AddressReleases).Lister()
	f.Start(stop)
	go func() {
		for gvr, ok := range f.WaitForCacheSync(stop) {
			if !ok {
				klog.ErrorS(nil, "approvals are not readable: is the CRD installed (deploy/base)?", "resource", gvr.Resource)
			}
		}
	}()
}

func (a *approvals) policy(ctx context.Context, name string) policyCheck {
	a.mu.Lock()
	c, ok := a.checked[name]
	a.mu.Unlock()
	if ok && time.Since(c.at) < policyCheckTTL {
		return c
	}
	c = a.checkPolicy(ctx, name)
	c.at = time.Now()
	a.mu.Lock()
	a.checked[name] = c
	a.mu.Unlock()
	return c
}

func (a *approvals) checkPolicy(ctx context.Context, name string) policyCheck {
	if a.client == nil {
		return policyCheck{err: fmt.Errorf("no Kubernetes client")}
	}
	adm := a.client.AdmissionregistrationV1()
	pol, err := adm.ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return policyCheck{err: fmt.Errorf("ValidatingAdmissionPolicy %q: %w", name, err)}
	}
	b, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return policyCheck{err: fmt.Errorf("ValidatingAdmissionPolicyBinding %q: %w", name, err)}
	}
	if b.Spec.PolicyName != name || !slices.Contains(b.Spec.ValidationActions, admissionv1.Deny) {
		return policyCheck{err: fmt.Errorf("ValidatingAdmissionPolicyBinding %q does not bind policy %q with validationActions [Deny]", name, name)}
	}
	if err := shippedIn(pol); err != nil {
		return policyCheck{err: err}
	}
	return policyCheck{since: lastWritten(pol.ObjectMeta, b.ObjectMeta)}
}

// lastWritten is when any of objs was last created or written, as their
// metadata tells (the API server sets both).
func lastWritten(objs ...metav1.ObjectMeta) time.Time {
	var t time.Time
	for _, m := range objs {
		if m.CreationTimestamp.After(t) {
			t = m.CreationTimestamp.Time
		}
		for _, f := range m.ManagedFields {
			// The API server writes a policy's status (its type check):
			// that changes nothing of what it checks.
			if f.Time != nil && f.Subresource == "" && f.Time.After(t) {
				t = f.Time.Time
			}
		}
	}
	return t
}

// inForce says whether admission policy name and its binding are
// installed and deny what they reject (nil error), and since when, as
// they are now, they are relied on: their last write plus the propagation
// time (zero when never written, as in a fake client). Objects written
// earlier were not checked by them: the policy was missing, or weaker,
// for a while, or an API server did not enforce it yet.
func (a *approvals) inForce(ctx context.Context, name string) (time.Time, error) {
	c := a.policy(ctx, name)
	if c.err != nil || c.since.IsZero() {
		return c.since, c.err
	}
	return c.since.Add(a.propagation).Truncate(time.Second), nil
}

// notChecked says why objects made before since are not taken as checked.
func (a *approvals) notChecked(what string, since time.Time) string {
	return fmt.Sprintf("was made before the admission policy that verifies %s was last installed or changed, or within review.approvals.policyPropagation (%s) after, before every API server enforced it (%s): nothing checked who made it",
		what, a.propagation, since.UTC().Format(time.RFC3339))
}

// list converts the cached objects of a lister.
func list[T any](l cache.GenericLister, conv func(*unstructured.Unstructured) (*T, error)) []*T {
	if l == nil {
		return nil
	}
	objs, err := l.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*T
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			if v, err := conv(u); err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

// forObject lists the approvals naming ref, oldest first.
func (a *approvals) forObject(ref objectref.Ref) []*reviewapi.PlanApproval {
	var out []*reviewapi.PlanApproval
	for _, pa := range list(a.plans, reviewapi.PlanApprovalFrom) {
		if pa.Spec.Object.Matches(ref) {
			out = append(out, pa)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Name < out[j].Name // creation times are whole seconds
	})
	return out
}

// decide says what the approvals of ref amount to for plan p. Nobody
// among the plan's contributors may approve it: neither an author the API
// server vouched for, nor anyone allowed to edit an input whose editor is
// unknown (contributors.go).
func (a *approvals) decide(ctx context.Context, ref objectref.Ref, p *engine.Plan, contributors func() (records.Contributors, error)) (engine.Approval, []*reviewapi.PlanApproval) {
	var out engine.Approval
	items := a.forObject(ref)
	if len(items) == 0 {
		return out, nil
	}
	since, err := a.inForce(ctx, reviewapi.AdmissionPolicy)
	if err != nil {
		out.Ignored = append(out.Ignored, fmt.Sprintf("approvals are not honoured while the admission policy that verifies approvers is missing: %v", err))
		return out, nil
	}
	c, err := contributors()
	if err != nil {
		// Fail closed: who made the change is not known.
		out.Ignored = append(out.Ignored, fmt.Sprintf("approvals are not counted while the plan record, which says who made the change, cannot be read: %v", err))
		return out, nil
	}
	var counted []*reviewapi.PlanApproval
	for _, pa := range items {
		who := pa.Spec.Approver
		switch {
		case pa.Created.Before(since):
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s by %q %s; make a new one", pa.Name, who, a.notChecked("approvers", since)))
			continue
		case pa.Spec.PlanID != p.ID:
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s by %q approves %s, but the plan awaiting approval is %s", pa.Name, who, pa.Spec.PlanID, p.ID))
			continue
		case pa.Created.Before(p.Created.Truncate(time.Second)):
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s by %q was made before plan %s was", pa.Name, who, p.ID))
			continue
		case slices.Contains(c.Authors, who):
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s: %q made a change this plan contains and cannot approve it", pa.Name, who))
			continue
		case slices.Contains(out.Approvers, who):
			continue // the same person twice counts once
		}
		if why := a.mayHaveChanged(ctx, planKey(p), pa, c.Unverified); why != "" {
			out.Ignored = append(out.Ignored, why)
			continue
		}
		out.Approvers = append(out.Approvers, who)
		counted = append(counted, pa)
	}
	out.Approved = len(out.Approvers) >= a.required
	return out, counted
}

// mayHaveChanged says why pa's approver may have made the change of the
// plan named plan (planKey) through one of inputs, whose editor is
// unknown: they are allowed to edit it, or that cannot be told; "" when
// they are allowed to edit none.
func (a *approvals) mayHaveChanged(ctx context.Context, plan string, pa *reviewapi.PlanApproval, inputs []records.Input) string {
	if len(inputs) == 0 {
		return ""
	}
	who := pa.Spec.Approver
	if pa.Spec.ApproverGroups == nil {
		return fmt.Sprintf("PlanApproval %s by %q is not counted: the plan's inputs include %s, whose editor cannot be verified, and the approval does not carry its approver's groups to check that they cannot edit it (approve with examplectl approve)",
			pa.Name, who, inputs[0])
	}
	for _, in := range inputs {
		allowed, err := a.mayEditFor(ctx, plan, who, pa.Spec.ApproverGroups, in)
		if err != nil {
			return fmt.Sprintf("PlanApproval %s by %q is not counted: cannot check whether they may edit %s, whose editor cannot be verified: %v", pa.Name, who, in, err)
		}
		if allowed {
			return fmt.Sprintf("PlanApproval %s: %q may edit %s, whose editor cannot be verified, so may have made this plan's change; another reviewer must approve it", pa.Name, who, in)
		}
	}
	return ""
}

// mayEditFor is mayEdit, its answer kept for plan (editKey, the TTLs).
// Errors are not kept: the next look asks again.
func (a *approvals) mayEditFor(ctx context.Context, plan, who string, groups []string, in records.Input) (bool, error) {
	key := editKey{plan: plan, who: who, groups: strings.Join(groups, "\x00"), in: in}
	if v, ok := a.edits.Get(key); ok {
		return v.(bool), nil
	}
	allowed, err := a.mayEdit(ctx, who, groups, in)
	switch {
	case err != nil:
	case allowed:
		a.edits.Add(key, true, editAllowedTTL)
	default:
		a.edits.Add(key, false, editDeniedTTL)
	}
	return allowed, err
}

// editVerbs are the verbs by which someone may have made an input what it
// is.
var editVerbs = []string{"update", "patch", "create"}

// mayEdit asks the API server (a SubjectAccessReview, never a guess)
// whether who, in groups, may edit in.
func (a *approvals) mayEdit(ctx context.Context, who string, groups []string, in records.Input) (bool, error) {
	if a.client == nil {
		return false, fmt.Errorf("no Kubernetes client")
	}
	for _, verb := range editVerbs {
		r, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: who, Groups: groups, ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: in.Namespace, Verb: verb, Group: in.Group, Resource: in.Resource, Name: in.Name,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("SubjectAccessReview: %w", err)
		}
		if r.Status.Allowed {
			return true, nil
		}
	}
	return false, nil
}

// unlocksFor lists the unlock requests naming ref: those whose requester
// the API server verified, and those made before (stale, with why); an
// error when the admission policy is missing.
func (a *approvals) unlocksFor(ctx context.Context, ref objectref.Ref) (Requests[reviewapi.StateUnlock], error) {
	var out []*reviewapi.StateUnlock
	for _, u := range list(a.unlocks, reviewapi.StateUnlockFrom) {
		if u.Spec.Object.Matches(ref) {
			out = append(out, u)
		}
	}
	return verified(ctx, a, "unlock request", out, func(u *reviewapi.StateUnlock) (reviewapi.Meta, string) {
		return u.Meta, u.Spec.Requester
	})
}

// releases lists the address release requests, oldest first, split as
// unlocksFor's.
func (a *approvals) releases(ctx context.Context) (Requests[reviewapi.AddressRelease], error) {
	all := list(a.released, reviewapi.AddressReleaseFrom)
	slices.SortStableFunc(all, func(x, y *reviewapi.AddressRelease) int {
		return cmp.Or(x.Created.Compare(y.Created), cmp.Compare(x.Name, y.Name))
	})
	return verified(ctx, a, "release request", all, func(r *reviewapi.AddressRelease) (reviewapi.Meta, string) {
		return r.Meta, r.Spec.Requester
	})
}

// Requests are review requests of one kind (unlocks, releases): Verified,
// made while the admission policy that checks their requester was in
// force; Stale, made before, which could name anyone: each counts for
// nothing, and is refused once, saying Why.
type Requests[T any] struct {
	Verified, Stale []*T
	Why             string
}

// verified splits reqs (what: "unlock request") into Requests.
func verified[T any](ctx context.Context, a *approvals, what string, reqs []*T, of func(*T) (reviewapi.Meta, string)) (Requests[T], error) {
	var out Requests[T]
	if len(reqs) == 0 {
		return out, nil
	}
	since, err := a.inForce(ctx, reviewapi.AdmissionPolicy)
	if err != nil {
		return out, fmt.Errorf("%ss are not honoured while the admission policy that verifies requesters is missing: %w", what, err)
	}
	out.Why = "it " + a.notChecked("requesters", since)
	for _, r := range reqs {
		if m, _ := of(r); m.Created.Before(since) {
			out.Stale = append(out.Stale, r)
		} else {
			out.Verified = append(out.Verified, r)
		}
	}
	return out, nil
}

// remove deletes used approvals and unlock requests (their record and the
// audit log keep what they said).
func (a *approvals) remove(ctx context.Context, gvr schema.GroupVersionResource, names ...string) {
	if a.dyn == nil {
		return
	}
	for _, n := range names {
		if err := a.dyn.Resource(gvr).Namespace(a.namespace).Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			klog.V(2).InfoS("cannot delete a used review object", "resource", gvr.Resource, "name", n, "err", err)
		}
	}
}

// removeForPlan deletes the approvals of plan id of ref.
func (a *approvals) removeForPlan(ctx context.Context, ref objectref.Ref, id string) {
	var names []string
	for _, pa := range a.forObject(ref) {
		if pa.Spec.PlanID == id {
			names = append(names, pa.Name)
		}
	}
	a.remove(ctx, reviewapi.PlanApprovals, names...)
}
