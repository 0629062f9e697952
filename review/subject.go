package review

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// Subject is the object a reconcile is about: what approvals must name,
// where its events go, what kind of plan it makes and how policy rules
// see it. The provider builds one per reconcile and hands it back with
// the outcome; only this package reads it.
type Subject struct {
	ref   objectref.Ref
	event runtime.Object // where events go
	kind  string         // records.KindChange, KindDestroy or KindDrift
	// contrib are who may have made the change planned: authors the API
	// server vouched for, inputs whose editor is unknown (contributors.go).
	contrib records.Contributors
	// asked: contrib asked for this plan alone (an address's release),
	// no change of the object's inputs: they are its authors, never
	// those of a later plan of the object (Record.Unapplied).
	asked bool
	// object is the object as policy rules see it.
	meta metav1.ObjectMeta
	// cause is the Service whose change this is, when the object is
	// another's (a new target pool): audit lines name it.
	cause *objectref.Ref
	// carries are the values of other objects a shared object's plan
	// carries ("pool all: deregistration delay 1h0m0s asked by Service
	// team-a/web"): audit lines name them.
	carries []string
	// members are a group's member Services: as policy rules see them,
	// then (set after the reconcile) as its record keeps them.
	members []*v1.Service
	// route is the route of a rule set's reconcile: its events about the
	// set's plan go there, to the route's author (routeReasons).
	route runtime.Object
	// guest is the Service of another namespace whose reconcile this is,
	// when a guest's reconcile converges its group: the group's events go
	// to its owners, the guest is told only that it failed.
	guest *v1.Service
}

func (s Subject) String() string { return s.ref.String() }

// WithMembers is s with a group's members as its record keeps them (the
// rendering's, those left out included), once the reconcile said which.
func (s Subject) WithMembers(members []*v1.Service) Subject {
	s.members = members
	return s
}

// ServiceSubject is a Service's reconcile; a change (not a deletion) has
// contributors.
func (b *Board) ServiceSubject(ctx context.Context, in *annotations.Service, kind string) Subject {
	svc := in.Service
	s := Subject{
		ref:   objectref.Service(svc),
		event: svc, kind: kind, meta: svc.ObjectMeta,
	}
	// A change's contributors are the Service's editors; so are those of
	// a destroy while the Service lives on (someone changed its type) and
	// of a hand-over (someone set the deletion policy retain). Who deleted
	// a Service, no annotation tells.
	if kind == records.KindChange || kind == records.KindDestroy && (svc.DeletionTimestamp == nil || in.Retains()) {
		s.contrib = b.contributors(ctx, in)
	}
	return s
}

// RouteSetSubject is the route set's reconcile: it has no object of its
// own, so its events go to its record's ConfigMap.
func (b *Board) RouteSetSubject(workspace, kind string) Subject {
	return Subject{ref: objectref.RouteSet, event: b.recordObject(workspace), kind: kind}
}

// PoolsSubject is the target pools' reconcile: like the route set, their
// events go to their record's ConfigMap.
func (b *Board) PoolsSubject(workspace, kind string) Subject {
	return Subject{ref: objectref.TargetPools, event: b.recordObject(workspace), kind: kind}
}

// PodPoolSubject is pod pool ref's reconcile (ADR 24): its events go to
// the Service whose port it stands for (svc; nil once the Service is
// gone: its record's ConfigMap), and rules and approvals see the
// Service's labels and annotations. Its changes come from the Service's
// selector and from the pods of its namespace, whose editors Kubernetes
// never records: nobody allowed to edit the Service or to make its
// namespace's pods (records.PodMakers) may approve its plan. Who deleted
// a Service, nothing tells, as for the Service's own plan.
func (b *Board) PodPoolSubject(ref objectref.Ref, svc *v1.Service, workspace, kind string) Subject {
	s := Subject{ref: ref, kind: kind, event: b.recordObject(workspace)}
	if svc == nil {
		return s
	}
	s.event, s.meta = svc, metav1.ObjectMeta{Namespace: svc.Namespace, Labels: svc.Labels, Annotations: svc.Annotations}
	if kind == records.KindChange || svc.DeletionTimestamp == nil {
		service := records.Input{Resource: records.ResourceServices, Namespace: svc.Namespace, Name: svc.Name}
		s.contrib.Unverified = append([]records.Input{service}, records.PodMakers(svc.Namespace)...)
	}
	return s
}

// CausedBy is s made by svc's change (a target pool created for its
// node selection): with svc's contributors, and audit lines naming it.
func (b *Board) CausedBy(ctx context.Context, s Subject, in *annotations.Service) Subject {
	cause := objectref.Service(in.Service)
	s.cause, s.contrib = &cause, b.contributors(ctx, in)
	return s
}

// Carrying is s carrying values other objects asked of it (a target
// pool's deregistration delay): audit lines name them and who asked.
func (s Subject) Carrying(values []string) Subject {
	s.carries = values
	return s
}

// recordObject is the ConfigMap of workspace's record: where the events
// of an object without a Kubernetes object of its own go.
func (b *Board) recordObject(workspace string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: records.IndexName(workspace), Namespace: b.cfg.Review.Namespace}}
}

// GroupSubject is a load balancer group's reconcile, made by caller's
// (a member's, joining or leaving) or, when nil, by a drift check whose
// events go to the record's ConfigMap. members are its members, in order.
// A group that keeps members is changed, not destroyed, by a member's
// deletion: its kind is then a change. A change's contributors are those
// of every member and of the caller (a deletion has none).
func (b *Board) GroupSubject(ctx context.Context, g annotations.Group, workspace string, members []*v1.Service, caller *v1.Service, kind string) Subject {
	s := Subject{ref: objectref.Group(g.Namespace, g.Name), kind: kind, members: members}
	if len(members) > 0 {
		// Rules see the labels and annotations of the member that sets
		// the load balancer.
		s.meta = metav1.ObjectMeta{Labels: members[0].Labels, Annotations: members[0].Annotations}
	}
	s.event = b.recordObject(workspace)
	switch {
	case caller != nil && caller.Namespace != g.Namespace:
		// A guest's reconcile: what the group's plan says is its owners',
		// on the home member that sets the load balancer.
		s.guest = caller
		if len(members) > 0 && members[0].Namespace == g.Namespace {
			s.event = members[0]
		}
	case caller != nil:
		s.event = caller
	}
	if kind == records.KindDestroy && len(members) > 0 {
		s.kind = records.KindChange // a member leaving changes the group
	}
	if kind == records.KindChange {
		for _, m := range members {
			s.contrib = s.contrib.Add(b.contributors(ctx, annotations.Read(m)))
		}
		if caller != nil {
			s.contrib = s.contrib.Add(b.contributors(ctx, annotations.Read(caller)))
		}
	}
	return s
}

// DriftSubject is the drift check of k, an object the engine converged.
func (b *Board) DriftSubject(ctx context.Context, k engine.Known) Subject {
	switch {
	case k.Service != nil:
		return b.ServiceSubject(ctx, annotations.Read(k.Service), records.KindDrift)
	case k.Group != nil:
		g := annotations.Group{Namespace: k.Group.Namespace, Name: k.Group.Name}
		return b.GroupSubject(ctx, g, k.Job.Key, engine.SortMembers(g.Namespace, k.Group.Members), nil, records.KindDrift)
	default:
		// The route set, the pools, a Gateway, an address: its own
		// identity, its events on its record's ConfigMap.
		return Subject{ref: k.Ref, event: b.recordObject(k.Job.Key), kind: records.KindDrift}
	}
}
