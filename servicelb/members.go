package servicelb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// groupLoadBalancers converges the load balancers of the groups
// (docs/shared-load-balancers.md): a member joining, staying or leaving,
// its own load balancer released, and the guests a ReferenceGrant lets in
// or leaves out (consent.go).
type groupLoadBalancers struct {
	*shared
	engine groupEngine
	pools  *targetPools
	// consent queues the groups whose guests a ReferenceGrant change
	// may let in or leave out (consent.go).
	consent consentQueue
}

// ensureMember converges svc's group with svc in it, then removes what
// served svc before (its own load balancer, another group), and only then
// returns the group's address: the new home serves before the old one
// goes (docs/shared-load-balancers.md, "Move").
func (l *groupLoadBalancers) ensureMember(ctx context.Context, in *annotations.Service, nodes []*v1.Node, g annotations.Group) (*v1.LoadBalancerStatus, error) {
	svc := in.Service
	lb, rep, subj, err := l.reconcileGroup(ctx, g, svc, false, nodes, records.KindChange)
	if ex := rep.Excludes(svc); ex != nil {
		return nil, fmt.Errorf("%s is left out of load balancer group %s: %w", objectref.Service(svc).Describe(), g, ex)
	}
	var sharing []*v1.Service
	if rep != nil {
		sharing = rep.Members
	}
	st, err := l.served(subj, in, sharing, lb, err)
	var retry *api.RetryError
	switch {
	case err != nil && svc.Namespace != g.Namespace && !errors.As(err, &retry):
		// A guest is told that its group failed, not the owners' error
		// (the service controller puts it in the guest's events).
		return nil, review.GuestError(objectref.Group(g.Namespace, g.Name), err)
	case err != nil:
		return nil, err
	}
	if err := l.release(ctx, in); err != nil {
		return nil, err
	}
	if err := l.leave(ctx, svc, g, nodes, records.KindChange); err != nil {
		return nil, err
	}
	return st, nil
}

// release destroys svc's own load balancer, if it has one, now that a
// group serves it (under its own destroy review); once per process and
// stay in a group.
func (l *groupLoadBalancers) release(ctx context.Context, in *annotations.Service) error {
	svc := in.Service
	if _, done := l.released.Load(svc.UID); done {
		return nil
	}
	// Most members never had one: asking costs no terraform and writes no
	// record.
	if _, exists, err := l.engine.GetLoadBalancer(ctx, in); err != nil || !exists {
		if err == nil {
			l.released.Store(svc.UID, true)
		}
		return err
	}
	subj := l.board.ServiceSubject(ctx, in, records.KindDestroy)
	// The policy it asks for, if readable.
	out, err := l.board.Run(ctx, &subj, l.policy(in.LB), func(rv engine.Review) (*engine.Outcome, error) {
		return l.engine.ReleaseLoadBalancer(ctx, in, rv)
	})
	if err := retryIfWaiting(err); err != nil {
		return err
	}
	l.board.Removed(ctx, out)
	l.lifecycle.asks.forget(objectref.Service(svc))
	l.released.Store(svc.UID, true)
	return nil
}

// leave takes svc out of every group it was applied in (or, for a
// deletion, names) but keep: each is rendered again without it, the last
// member's leaving destroys it. nodes may be nil (a deletion): the last
// nodes seen then serve.
func (l *groupLoadBalancers) leave(ctx context.Context, svc *v1.Service, keep annotations.Group, nodes []*v1.Node, kind string) error {
	gs := l.groups.formerOf(ctx, svc)
	if kind == records.KindDestroy {
		if g, err := l.groups.of(svc); err == nil && g.Name != "" && !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	for _, g := range gs {
		if g == keep {
			continue
		}
		_, _, _, err := l.reconcileGroup(ctx, g, svc, true, nodes, kind)
		if errors.Is(err, engine.ErrNotOwner) {
			continue // sharded: the group's replica takes it out
		}
		if err := retryIfWaiting(err); err != nil {
			return err
		}
	}
	return nil
}

// groupsOf are the groups svc may be served by: the one its annotation
// names and those it was applied in.
func (l *groupLoadBalancers) groupsOf(ctx context.Context, svc *v1.Service) []annotations.Group {
	gs := l.groups.formerOf(ctx, svc)
	if g, err := l.groups.of(svc); err == nil && g.Name != "" && !slices.Contains(gs, g) {
		gs = append([]annotations.Group{g}, gs...)
	}
	return gs
}

func (l *groupLoadBalancers) renderGroup(g annotations.Group, members []*v1.Service) lbmodel.Group {
	return lbmodel.Group{Namespace: g.Namespace, Name: g.Name, Members: members}
}

// reconcileGroup converges g to its members now, caller joining (or
// staying) or leaving it, under the group's review; with no members left
// it destroys g's load balancer, planned from the leaver's rendering. It
// reports the plan (events on caller, the group's record) and what became
// of each member. One reconcile of a group at a time, its members read
// under that lock: members call at once, and a rendering from members
// read before another's apply must not be applied after it.
func (l *groupLoadBalancers) reconcileGroup(ctx context.Context, g annotations.Group, caller *v1.Service, leaving bool,
	nodes []*v1.Node, kind string) (*engine.LoadBalancer, *engine.GroupReport, review.Subject, error) {
	unlock := l.groups.lock(g)
	defer unlock()
	before := l.groups.appliedTo(ctx, g)
	members := l.groups.members(g, caller, leaving)
	// A group belongs to its namespace: its load balancer and settings
	// come from a home member. Without one its guests wait, and the last
	// home member leaving takes the load balancer with it.
	if !slices.ContainsFunc(members, func(m *v1.Service) bool { return m.Namespace == g.Namespace }) {
		if !leaving {
			subj := l.board.ServiceSubject(ctx, annotations.Read(caller), records.KindChange)
			err := fmt.Errorf("load balancer group %s has no member in its own namespace %s, where its load balancer and settings come from: service %s/%s waits for one",
				g, g.Namespace, caller.Namespace, caller.Name)
			l.board.Eventf(subj, v1.EventTypeWarning, "GroupWithoutHomeMember", "%v", err)
			return nil, nil, subj, api.NewRetryError(err.Error(), approvalRetry)
		}
		members = nil
	}
	var leavers []*v1.Service
	if leaving {
		leavers = []*v1.Service{caller}
		if nodes == nil && len(members) > 0 {
			// A deletion comes without nodes.
			if nodes = l.groups.lastNodes(); nodes == nil {
				return nil, nil, review.Subject{}, api.NewRetryError(fmt.Sprintf("load balancer group %s: waiting for the node list to render it without service %s/%s",
					g, caller.Namespace, caller.Name), provisioningRetry)
			}
		}
	}
	rg := l.renderGroup(g, engine.SortMembers(g.Namespace, members))
	klog.V(2).InfoS("reconciling load balancer group", "group", g.String(), "members", len(members), "caller", klog.KObj(caller))
	for _, m := range rg.Members {
		klog.V(4).InfoS("load balancer group member", "group", g.String(), "service", klog.KObj(m))
	}
	if len(members) == 0 {
		subj := l.board.GroupSubject(ctx, g, "", nil, caller, records.KindDestroy)
		out, err := l.board.Run(ctx, &subj, l.groupPolicy(g, leavers), func(rv engine.Review) (*engine.Outcome, error) {
			return l.engine.RemoveGroup(ctx, l.renderGroup(g, leavers), rv)
		})
		if err == nil {
			l.groups.remember(g, nil, true)
			l.board.Removed(ctx, out)
			l.board.GroupRemoved(g)
			l.lifecycle.asks.forget(objectref.Group(g.Namespace, g.Name))
		}
		return nil, nil, subj, err
	}
	// A member's deletion leaves the group changed (GroupSubject).
	subj := l.board.GroupSubject(ctx, g, "", rg.Members, caller, kind)
	var poolID string
	var primary *annotations.Service
	if p := l.engine.GroupPrimary(rg); p != nil {
		primary = annotations.Read(p)
		var err error
		if poolID, err = l.pools.targetPool(ctx, primary, nodes, l.groupPolicy(g, rg.Members)); err != nil {
			return nil, nil, subj, err
		}
	}
	if poolID != "" {
		nodes = nil // the pool holds them
	}
	l.board.Unlock(ctx, l.engine, subj, func() (engine.Job, error) {
		_, _, j, err := l.engine.RenderGroup(rg, nodes, poolID)
		return j, err
	})
	var lb *engine.LoadBalancer
	var rep *engine.GroupReport
	out, err := l.board.Run(ctx, &subj, l.groupPolicy(g, rg.Members), func(rv engine.Review) (out *engine.Outcome, err error) {
		lb, rep, out, err = l.engine.ReconcileGroup(ctx, rg, nodes, poolID, rv)
		if rep != nil {
			subj = subj.WithMembers(rep.Members) // what the record keeps
		}
		return out, err
	})
	if out != nil && out.Result != nil && out.Result.FastPath {
		fastPathSkips.Inc()
	}
	if err == nil && lb != nil && primary != nil {
		l.asked(objectref.Group(g.Namespace, g.Name), primary, poolID, lb)
	}
	if rep != nil {
		if lb != nil && lb.Status == "active" && (out.Result == nil || !out.Result.FastPath) {
			l.follow(ctx, g, lb, rep.Members, caller)
		}
		applied := err == nil && out.Result != nil
		l.groups.remember(g, rep.Members, applied)
		l.board.ReportMembers(g, rep)
		if applied {
			l.withdrawn(ctx, g, lb, before, rg.Members)
		}
	}
	return lb, rep, subj, err
}

// groupPolicy is the strictest of the cluster's and the home members'
// apply policies: a home member may tighten its group's review, never
// loosen it; a guest's policy governs nothing of the owner's (a guest's
// plan-only would freeze the owner's own changes).
func (l *groupLoadBalancers) groupPolicy(g annotations.Group, members []*v1.Service) annotations.ApplyPolicy {
	pol := annotations.ApplyPolicy(l.cfg.Terraform.ApplyPolicy)
	for _, m := range members {
		if m.Namespace != g.Namespace {
			continue
		}
		ann, _ := annotations.Parse(m.Annotations) // a member's bad annotation is its own error
		pol = annotations.Stricter(pol, ann.ApplyPolicy)
	}
	return pol
}

// follow sets the address of the group's members applied before (but
// caller, whose own call returns it) when theirs differs: the service
// controller sets a Service's status only from that Service's own calls,
// and the group's load balancer may have changed (a replacement) on
// another member's.
func (l *groupLoadBalancers) follow(ctx context.Context, g annotations.Group, lb *engine.LoadBalancer, rendered []*v1.Service, caller *v1.Service) {
	if l.client == nil {
		return
	}
	for _, m := range l.groups.followers(g, rendered, caller) {
		st := status(lb, annotations.Read(m), rendered)
		if reflect.DeepEqual(m.Status.LoadBalancer.Ingress, st.Ingress) {
			continue
		}
		l.patchIngress(ctx, g, m, st)
	}
}

// retryIfWaiting turns a plan that waits (for approval, or denied) into
// the service controller's retry; other errors pass.
func retryIfWaiting(err error) error {
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	if errors.As(err, &wait) || errors.As(err, &denied) {
		return api.NewRetryError(err.Error(), approvalRetry)
	}
	return err
}
