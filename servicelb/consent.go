package servicelb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/tenancy"
)

// A ReferenceGrant given or taken back changes who may be in the groups
// of its namespace, and no Service changes with it: the service
// controller would not call. So a grant change reconciles the groups of
// its namespace that have or had guests, from a queue: a guest whose
// consent is gone leaves the owner's load balancer within seconds, and
// one a new grant lets in joins (docs/tenancy.md).

// grantBatch gathers the grant changes of a moment (a namespace's grants
// applied together, a flip of readability) into one reconcile per group.
const grantBatch = time.Second

// The consent queue holds groups to reconcile, and namespaces to expand
// into their groups with guests: a key without a Name is every such group
// of its Namespace ("" Namespace: of every namespace).

type consentQueue = workqueue.TypedRateLimitingInterface[annotations.Group]

func newConsentQueue() consentQueue {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[annotations.Group]())
}

// grantsChanged queues the groups with guests of namespace ("": all).
func (l *groupLoadBalancers) grantsChanged(namespace string) {
	l.consent.AddAfter(annotations.Group{Namespace: namespace}, grantBatch)
}

// syncConsent reconciles the groups grant changes queue, until ctx ends.
func (l *groupLoadBalancers) syncConsent(ctx context.Context) {
	go func() {
		<-ctx.Done()
		l.consent.ShutDown()
	}()
	for {
		key, quit := l.consent.Get()
		if quit {
			return
		}
		l.consentOnce(ctx, key)
		l.consent.Done(key)
	}
}

func (l *groupLoadBalancers) consentOnce(ctx context.Context, key annotations.Group) {
	if key.Name == "" {
		for _, g := range l.groups.withGuests(ctx, key.Namespace) {
			l.consent.Add(g)
		}
		l.consent.Forget(key)
		return
	}
	err := l.reconcileConsent(ctx, key)
	var wait *engine.AwaitingApprovalError
	var retry *api.RetryError
	switch {
	case errors.As(err, &wait):
		// Under review like any plan: an approval is acted on when the
		// group is reconciled again, as the service controller retries.
		l.consent.AddAfter(key, approvalRetry)
	case errors.As(err, &retry):
		l.consent.AddAfter(key, retry.RetryAfter()) // waiting, not failing
	case err != nil:
		klog.ErrorS(err, "load balancer group: cannot follow its namespace's ReferenceGrants; retrying", "group", key.String())
		l.consent.AddRateLimited(key)
	default:
		l.consent.Forget(key)
	}
}

// reconcileConsent converges g to its members now, a home member as the
// caller (a group without one has no load balancer: its guests wait), and
// gives a guest it now serves that had no address the group's.
func (l *groupLoadBalancers) reconcileConsent(ctx context.Context, g annotations.Group) error {
	members := engine.SortMembers(g.Namespace, l.groups.members(g, nil, false))
	if len(members) == 0 || members[0].Namespace != g.Namespace {
		return nil
	}
	nodes := l.groups.lastNodes()
	if nodes == nil {
		// Just after a start: the service controller passes them soon.
		return api.NewRetryError(fmt.Sprintf("load balancer group %s: waiting for the node list to render it with", g), provisioningRetry)
	}
	lb, rep, _, err := l.reconcileGroup(ctx, g, members[0], false, nodes, records.KindChange)
	if err != nil {
		return err
	}
	l.admitted(ctx, g, lb, rep)
	return nil
}

// admitted sets the address of the guests g serves that show none: a
// guest let in by a new grant (its own reconcile failed, or it was left
// out before) would get it only at the service controller's next call.
func (l *groupLoadBalancers) admitted(ctx context.Context, g annotations.Group, lb *engine.LoadBalancer, rep *engine.GroupReport) {
	if lb == nil || lb.Status != "active" || rep == nil {
		return
	}
	for _, m := range rep.Members {
		if m.Namespace == g.Namespace || rep.Excludes(m) != nil || len(m.Status.LoadBalancer.Ingress) > 0 {
			continue
		}
		l.patchIngress(ctx, g, m, status(lb, annotations.Read(m), rep.Members))
	}
}

// withdrawn tells the guests of g applied before (before) that are no
// members now (members) for want of consent, and g's owner, and clears
// such a guest's address: g was just applied without it.
func (l *groupLoadBalancers) withdrawn(ctx context.Context, g annotations.Group, lb *engine.LoadBalancer, before []objectref.Ref, members []*v1.Service) {
	var owner *v1.Service
	if i := slices.IndexFunc(members, func(m *v1.Service) bool { return m.Namespace == g.Namespace }); i >= 0 {
		owner = members[i]
	}
	for _, svc := range l.groups.naming(g) {
		if svc.Namespace == g.Namespace || svc.Spec.Type != v1.ServiceTypeLoadBalancer || svc.DeletionTimestamp != nil ||
			!slices.ContainsFunc(before, func(r objectref.Ref) bool { return isRef(r, svc) }) ||
			slices.ContainsFunc(members, func(m *v1.Service) bool { return m.Namespace == svc.Namespace && m.Name == svc.Name }) {
			continue
		}
		var refused *tenancy.RefusedError
		if err := l.refs.consent(ctx, svc); !errors.As(err, &refused) {
			continue // left for another reason (its own refusal says so)
		}
		klog.InfoS("a guest left its load balancer group: its consent is gone", "group", g.String(), "service", klog.KObj(svc))
		l.board.ConsentWithdrawn(g, owner, svc, refused.Reason)
		if lb != nil && showsAddress(svc, lb) {
			l.patchIngress(ctx, g, svc, map[string]any{"ingress": nil})
		}
	}
}

// showsAddress tells whether svc's status shows lb's address.
func showsAddress(svc *v1.Service, lb *engine.LoadBalancer) bool {
	return slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(in v1.LoadBalancerIngress) bool {
		return in.IP != "" && (in.IP == lb.IPv4 || in.IP == lb.IPv6) || in.Hostname != "" && in.Hostname == lb.Hostname
	})
}

// patchIngress sets svc's status.loadBalancer (a LoadBalancerStatus, or a
// merge patch of it) with the status subresource, which the controller
// may patch: the service controller sets a Service's status only from
// that Service's own calls.
func (l *groupLoadBalancers) patchIngress(ctx context.Context, g annotations.Group, svc *v1.Service, loadBalancer any) {
	if l.client == nil {
		return
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"loadBalancer": loadBalancer}})
	if err == nil {
		_, err = l.client.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	}
	if err != nil {
		klog.ErrorS(err, "cannot set a group member's load balancer address", "group", g.String(), "service", klog.KObj(svc))
	}
}
