package ccm

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/runner"
)

// serviceSubject is a Service's reconcile; the author is known only for
// a change (not a deletion) and only while the API server checks it.
func (v *review) serviceSubject(ctx context.Context, svc *v1.Service, kind string) subject {
	s := subject{
		ref:   objectref.Service(svc),
		event: svc, kind: kind, meta: svc.ObjectMeta,
	}
	if kind == records.KindChange {
		s.author = v.author(ctx, svc)
	}
	return s
}

// author is who last changed what the controller renders from svc, when
// the optional admission policy makes the API server check the
// annotation; "" otherwise (Kubernetes itself records no author).
func (v *review) author(ctx context.Context, svc *v1.Service) string {
	who := svc.Annotations[reviewapi.AuthorAnnotation]
	if who == "" || v.approvals.verified(ctx, reviewapi.AuthorAdmissionPolicy) != nil {
		return ""
	}
	return who
}

// routeSetSubject is the route set's reconcile: it has no object of its
// own, so its events go to its record's ConfigMap.
func (v *review) routeSetSubject(workspace, kind string) subject {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: records.IndexName(workspace), Namespace: v.cfg.Review.Namespace}}
	return subject{ref: objectref.RouteSet, event: cm, kind: kind}
}

// poolsSubject is the target pools' reconcile: like the route set, their
// events go to their record's ConfigMap.
func (v *review) poolsSubject(workspace, kind string) subject {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: records.IndexName(workspace), Namespace: v.cfg.Review.Namespace}}
	return subject{ref: objectref.TargetPools, event: cm, kind: kind}
}

// groupSubject is a load balancer group's reconcile, made by caller's
// (a member's, joining or leaving) or, when nil, by a drift check whose
// events go to the record's ConfigMap. members are its members, in order.
func (v *review) groupSubject(ctx context.Context, g annotations.Group, workspace string, members []*v1.Service, caller *v1.Service, kind string) subject {
	s := subject{ref: objectref.Group(g.Namespace, g.Name), kind: kind, members: members}
	if len(members) > 0 {
		// Rules see the labels and annotations of the member that sets
		// the load balancer.
		s.meta = metav1.ObjectMeta{Labels: members[0].Labels, Annotations: members[0].Annotations}
	}
	switch {
	case caller != nil:
		s.event = caller
		if kind == records.KindChange {
			s.author = v.author(ctx, caller)
		}
	default:
		s.event = &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: records.IndexName(workspace), Namespace: v.cfg.Review.Namespace}}
	}
	return s
}

// reviewFor is how s's plans are decided under apply policy pol.
func (v *review) reviewFor(ctx context.Context, s subject, pol annotations.ApplyPolicy) engine.Review {
	obj := policy.Object{Kind: s.ref.Kind, Namespace: s.ref.Namespace, Name: s.ref.Name, Labels: s.meta.Labels, Annotations: s.meta.Annotations}
	for _, m := range s.members {
		obj.Members = append(obj.Members, policy.Member{Namespace: m.Namespace, Name: m.Name, Labels: m.Labels, Annotations: m.Annotations})
	}
	return engine.Review{
		Policy: pol,
		Object: obj,
		Approval: func(p *runner.Plan) engine.Approval {
			a, _ := v.approvals.decide(ctx, s.ref, p, s.author)
			return a
		},
		BeforeApply: func(p *runner.Plan, approvers []string) { v.applyStarting(s, pol, p, approvers) },
	}
}
