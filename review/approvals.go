package review

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/runner"
)

// policyCheckTTL is how long a check that the admission policies are
// installed is trusted.
const policyCheckTTL = 30 * time.Second

// approvals reads the PlanApprovals and StateUnlocks of the controller's
// namespace (an informer's cache) and decides what they amount to. Only
// objects whose identity the API server checked count: the admission
// policy reviewapi.AdmissionPolicy must be installed and bound.
type approvals struct {
	namespace string
	required  int
	client    kubernetes.Interface
	dyn       dynamic.Interface
	plans     cache.GenericLister
	unlocks   cache.GenericLister

	mu      sync.Mutex
	checked map[string]policyCheck // by admission policy name
}

type policyCheck struct {
	at  time.Time
	err error
}

func newApprovals(namespace string, required int) *approvals {
	return &approvals{namespace: namespace, required: required, checked: map[string]policyCheck{}}
}

// start watches the namespace's approvals and unlock requests.
func (a *approvals) start(client kubernetes.Interface, dyn dynamic.Interface, stop <-chan struct{}) {
	a.client, a.dyn = client, dyn
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, a.namespace, nil)
	a.plans = f.ForResource(reviewapi.PlanApprovals).Lister()
	a.unlocks = f.ForResource(reviewapi.StateUnlocks).Lister()
	f.Start(stop)
	go func() {
		for gvr, ok := range f.WaitForCacheSync(stop) {
			if !ok {
				klog.ErrorS(nil, "approvals are not readable: is the CRD installed (deploy/base)?", "resource", gvr.Resource)
			}
		}
	}()
}

// verified tells whether the admission policy name and its binding are
// installed and deny what they reject; nil error means they are.
func (a *approvals) verified(ctx context.Context, name string) error {
	a.mu.Lock()
	c, ok := a.checked[name]
	a.mu.Unlock()
	if ok && time.Since(c.at) < policyCheckTTL {
		return c.err
	}
	err := a.checkPolicy(ctx, name)
	a.mu.Lock()
	a.checked[name] = policyCheck{at: time.Now(), err: err}
	a.mu.Unlock()
	return err
}

func (a *approvals) checkPolicy(ctx context.Context, name string) error {
	if a.client == nil {
		return fmt.Errorf("no Kubernetes client")
	}
	adm := a.client.AdmissionregistrationV1()
	if _, err := adm.ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy %q: %w", name, err)
	}
	b, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %q: %w", name, err)
	}
	if b.Spec.PolicyName != name || !slices.Contains(b.Spec.ValidationActions, admissionv1.Deny) {
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %q does not bind policy %q with validationActions [Deny]", name, name)
	}
	return nil
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

// decide says what the approvals of ref amount to for plan p. author,
// when the API server vouched for it, may not approve their own change.
func (a *approvals) decide(ctx context.Context, ref objectref.Ref, p *runner.Plan, author string) (engine.Approval, []*reviewapi.PlanApproval) {
	var out engine.Approval
	items := a.forObject(ref)
	if len(items) == 0 {
		return out, nil
	}
	if err := a.verified(ctx, reviewapi.AdmissionPolicy); err != nil {
		out.Ignored = append(out.Ignored, fmt.Sprintf("approvals are not honoured while the admission policy that verifies approvers is missing: %v", err))
		return out, nil
	}
	var counted []*reviewapi.PlanApproval
	for _, pa := range items {
		who := pa.Spec.Approver
		switch {
		case pa.Spec.PlanID != p.ID:
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s by %q approves %s, but the plan awaiting approval is %s", pa.Name, who, pa.Spec.PlanID, p.ID))
		case pa.Created.Before(p.Created.Truncate(time.Second)):
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s by %q was made before plan %s was", pa.Name, who, p.ID))
		case author != "" && who == author:
			out.Ignored = append(out.Ignored, fmt.Sprintf("PlanApproval %s: %q made the change and cannot approve it", pa.Name, who))
		case slices.Contains(out.Approvers, who):
			// the same person twice counts once
		default:
			out.Approvers = append(out.Approvers, who)
			counted = append(counted, pa)
		}
	}
	out.Approved = len(out.Approvers) >= a.required
	return out, counted
}

// unlocksFor lists the unlock requests naming ref whose requester the API
// server verified; nil when the admission policy is missing.
func (a *approvals) unlocksFor(ctx context.Context, ref objectref.Ref) ([]*reviewapi.StateUnlock, error) {
	var out []*reviewapi.StateUnlock
	for _, u := range list(a.unlocks, reviewapi.StateUnlockFrom) {
		if u.Spec.Object.Matches(ref) {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if err := a.verified(ctx, reviewapi.AdmissionPolicy); err != nil {
		return nil, fmt.Errorf("unlock requests are not honoured while the admission policy that verifies requesters is missing: %w", err)
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
