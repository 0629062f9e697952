package renderer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/servicemodel"
)

// TagServiceGroup names, on a shared load balancer, the group it serves.
const TagServiceGroup = "k8s.example.com/service-group"

// GroupReport is what rendering a group did with its members, for events.
type GroupReport struct {
	// Members are the members rendered, in order: the primary first.
	Members []*corev1.Service
	// Excluded are the members that could not be rendered (left out).
	Excluded []MemberError
	// Conflicts are the listeners not rendered: an earlier member has them.
	Conflicts []ListenerConflict
	// Ignored are member settings that differ from the primary's.
	Ignored []IgnoredSetting
}

// MemberError is a member left out of its group's rendering.
type MemberError struct {
	Service *corev1.Service
	Err     error
}

// ListenerConflict is a member's listener that another, earlier member has.
type ListenerConflict struct {
	Service *corev1.Service
	// Listener is "protocol/port".
	Listener string
	Winner   *corev1.Service
}

// IgnoredSetting is a member's setting of the load balancer itself that
// differs from the primary's, which wins.
type IgnoredSetting struct {
	Service *corev1.Service
	// Setting names it (an annotation or a Service field); Value is the
	// member's, PrimaryValue the primary's ("" when unset).
	Setting, Value, PrimaryValue string
	Primary                      *corev1.Service
}

// Excludes tells whether svc was left out, and why.
func (r *GroupReport) Excludes(svc *corev1.Service) error {
	if r == nil {
		return nil
	}
	for _, e := range r.Excluded {
		if e.Service.UID == svc.UID && e.Service.Namespace == svc.Namespace && e.Service.Name == svc.Name {
			return e.Err
		}
	}
	return nil
}

// SortMembers orders a group's members: the group's own namespace's
// first, then by creation, then by namespace/name. The first is the
// primary. It returns a sorted copy.
func SortMembers(namespace string, members []*corev1.Service) []*corev1.Service {
	out := slices.Clone(members)
	slices.SortStableFunc(out, func(a, b *corev1.Service) int {
		home := func(s *corev1.Service) int {
			if s.Namespace == namespace {
				return 0
			}
			return 1
		}
		return cmp.Or(
			home(a)-home(b),
			a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			strings.Compare(a.Namespace, b.Namespace),
			strings.Compare(a.Name, b.Name),
		)
	})
	return out
}

// GroupOwnerTags are the owner tags of a group's load balancer.
func GroupOwnerTags(namespace, name, clusterID string) map[string]string {
	return map[string]string{lbmodel.TagClusterID: clusterID, lbmodel.TagServiceUID: objectref.Group(namespace, name).OwnerTag()}
}

// GroupLoadBalancerName is the cloud name of a group's load balancer when
// its primary sets no name: k8s- and 28 hex digits of a hash of the
// cluster id and the group.
func GroupLoadBalancerName(clusterID, namespace, name string) string {
	return objectref.HashedName("k8s-", 28, clusterID, objectref.Group(namespace, name).OwnerTag())
}

// member is one member with its own load balancer's description.
type member struct {
	svc *corev1.Service
	ann annotations.LoadBalancer
	lb  lbmodel.LoadBalancer
}

// GroupLoadBalancer renders the root module of a group's shared load
// balancer: the primary's settings and every member's listeners, a
// listener claimed twice going to the earlier member. Members that cannot
// be rendered are left out (GroupReport.Excluded); it fails only when none
// can be. Pure and deterministic, like LoadBalancer.
func GroupLoadBalancer(g lbmodel.Group, nodes []*corev1.Node, cfg Config) (_ *Module, _ *GroupReport, err error) {
	defer wrap(&err, "render load balancer group %s", g)
	rep := &GroupReport{}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, rep, err
	}
	limit := cmp.Or(cfg.MaxListeners, MaxListeners)
	var members []member
	var warnings []string
	for _, svc := range SortMembers(g.Namespace, g.Members) {
		mb, err := groupMember(svc, nodes, cfg)
		if err != nil {
			rep.Excluded = append(rep.Excluded, MemberError{Service: svc, Err: err})
			continue
		}
		if len(members) == 0 {
			warnings = mb.lb.Warnings // the primary's nodes and ranges are the group's
		}
		members = append(members, mb)
	}
	if len(members) == 0 {
		if len(rep.Excluded) == 0 {
			return nil, rep, errors.New("the group has no members")
		}
		return nil, rep, fmt.Errorf("no member can be rendered: %s/%s: %w", rep.Excluded[0].Service.Namespace, rep.Excluded[0].Service.Name, rep.Excluded[0].Err)
	}
	primary := members[0]
	spec := primary.lb
	spec.CloudName = cmp.Or(primary.ann.Name, GroupLoadBalancerName(cfg.ClusterID, g.Namespace, g.Name))
	spec.Tags = map[string]string{
		lbmodel.TagManagedBy:        generator,
		lbmodel.TagClusterID:        cfg.ClusterID,
		lbmodel.TagServiceNamespace: g.Namespace,
		TagServiceGroup:             g.Name,
		lbmodel.TagServiceUID:       objectref.Group(g.Namespace, g.Name).OwnerTag(),
	}
	owner := map[string]*corev1.Service{}
	spec.Listeners = nil
	for _, mb := range members {
		var mine []lbmodel.Listener
		for _, l := range mb.lb.Listeners {
			key := l.PortKey()
			if w := owner[key]; w != nil {
				rep.Conflicts = append(rep.Conflicts, ListenerConflict{Service: mb.svc, Listener: l.Protocol + "/" + strconv.Itoa(l.Port), Winner: w})
				continue
			}
			mine = append(mine, l)
		}
		if len(spec.Listeners)+len(mine) > limit {
			rep.Excluded = append(rep.Excluded, MemberError{Service: mb.svc, Err: &lbmodel.InputError{Field: "spec.ports",
				Reason: fmt.Sprintf("%d more listeners would pass the limit of %d per load balancer (the group has %d; loadBalancer.maxListeners)", len(mine), limit, len(spec.Listeners))}})
			rep.Conflicts = slices.DeleteFunc(rep.Conflicts, func(c ListenerConflict) bool { return c.Service == mb.svc })
			continue
		}
		for _, l := range mine {
			owner[l.PortKey()] = mb.svc
		}
		spec.Listeners = append(spec.Listeners, mine...)
		rep.Members = append(rep.Members, mb.svc)
		if mb.svc != primary.svc {
			rep.Ignored = append(rep.Ignored, ignored(mb, primary)...)
		}
	}
	slices.SortFunc(spec.Listeners, func(a, b lbmodel.Listener) int {
		return cmp.Or(strings.Compare(a.Protocol, b.Protocol), a.Port-b.Port)
	})

	names := make([]string, len(rep.Members))
	for i, s := range rep.Members {
		names[i] = s.Namespace + "/" + s.Name
	}
	r, err := newModuleRoot(cfg, cfg.LoadBalancerModule, DefaultLoadBalancerModuleSource, heading{
		about:   "load balancer group " + g.String(),
		notes:   []string{"Members, the first setting the load balancer: " + strings.Join(names, ", ") + "."},
		rewrite: "a member or the nodes change",
	})
	if err != nil {
		return nil, rep, err
	}
	if err := r.loadBalancer(spec, cfg, nil); err != nil {
		return nil, rep, err
	}
	r.delayOutput(groupDelay(members, rep.Members, cfg.DeregistrationDelay))
	return newModule(r.bytes(), warnings), rep, nil
}

// groupDelay is the deregistration delay a group's load balancer asks of
// its pool: nil when no rendered member sets one, else the longest its
// rendered members ask (a member without the annotation asks cluster's).
func groupDelay(members []member, rendered []*corev1.Service, cluster time.Duration) *time.Duration {
	var out *time.Duration
	set := false
	for _, mb := range members {
		if !slices.Contains(rendered, mb.svc) {
			continue
		}
		d := cluster
		if mb.ann.DeregistrationDelay != nil {
			d, set = *mb.ann.DeregistrationDelay, true
		}
		if out == nil || d > *out {
			out = &d
		}
	}
	if !set {
		return nil
	}
	return out
}

// GroupPrimary is the member whose settings the group's load balancer
// takes (the first that can be rendered), nil if none can.
func GroupPrimary(g lbmodel.Group, cfg Config) *corev1.Service {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil
	}
	for _, svc := range SortMembers(g.Namespace, g.Members) {
		if _, err := groupMember(svc, nil, cfg); err == nil {
			return svc
		}
	}
	return nil
}

// groupMember checks one member as LoadBalancer would render it alone,
// and translates it (servicemodel.TranslateMember).
func groupMember(svc *corev1.Service, nodes []*corev1.Node, cfg Config) (member, error) {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return member{}, &lbmodel.InputError{Field: "spec.type", Value: string(svc.Spec.Type), Reason: "is not LoadBalancer"}
	}
	// Read, as the member's own reconcile reads it: spec.loadBalancerIP
	// too, which a member may not use either.
	in := annotations.Read(svc)
	if in.Err != nil {
		return member{}, in.Err
	}
	ann := in.LB
	if ann.AdoptID != "" {
		return member{}, &lbmodel.InputError{Field: "annotation " + string(annotations.LBAdoptID), Value: ann.AdoptID,
			Reason: "is not supported on a member of a load balancer group (" + string(annotations.LBGroup) + ")"}
	}
	if len(ann.TLSSecrets) > 0 {
		// The group's root module has no certificates of its own yet:
		// members serve certificates already in the cloud.
		return member{}, &lbmodel.InputError{Field: "annotation " + string(annotations.LBTLSSecrets), Value: strings.Join(ann.TLSSecrets, ","),
			Reason: "is not supported on a member of a load balancer group (" + string(annotations.LBGroup) + "); use " + string(annotations.LBCertificateIDs)}
	}
	lb, err := servicemodel.TranslateMember(svc, ann, nodes, cfg.Service())
	if err != nil {
		return member{}, err
	}
	return member{svc: svc, ann: ann, lb: lb}, nil
}

// ignored lists the settings of the load balancer itself where mb
// differs from the primary.
func ignored(mb, primary member) []IgnoredSetting {
	a, p := mb.lb, primary.lb
	var out []IgnoredSetting
	add := func(setting, mine, theirs string) {
		if mine != theirs {
			out = append(out, IgnoredSetting{Service: mb.svc, Setting: setting, Value: mine, PrimaryValue: theirs, Primary: primary.svc})
		}
	}
	add(string(annotations.LBType), a.Type, p.Type)
	add(string(annotations.LBInternal), fmt.Sprint(a.Internal), fmt.Sprint(p.Internal))
	add(string(annotations.LBAlgorithm), a.Algorithm, p.Algorithm)
	add(string(annotations.LBName), mb.ann.Name, primary.ann.Name)
	add("spec.ipFamilies", a.IPFamily, p.IPFamily)
	add("spec.loadBalancerSourceRanges", strings.Join(a.SourceCIDRs, ","), strings.Join(p.SourceCIDRs, ","))
	add(string(annotations.LBNodeSelector), selectorString(mb.ann), selectorString(primary.ann))
	add("health check annotations", healthCheckAnnotations(mb.svc), healthCheckAnnotations(primary.svc))
	add("spec.externalTrafficPolicy", string(cmp.Or(mb.svc.Spec.ExternalTrafficPolicy, corev1.ServiceExternalTrafficPolicyCluster)),
		string(cmp.Or(primary.svc.Spec.ExternalTrafficPolicy, corev1.ServiceExternalTrafficPolicyCluster)))
	return out
}

// healthCheckAnnotations are svc's health check annotations, k=v, sorted.
func healthCheckAnnotations(svc *corev1.Service) string {
	var out []string
	for k, v := range svc.Annotations {
		if strings.HasPrefix(k, annotations.Prefix+"health-check-") && strings.TrimSpace(v) != "" {
			out = append(out, k+"="+strings.TrimSpace(v))
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func selectorString(ann annotations.LoadBalancer) string {
	if ann.NodeSelector == nil {
		return ""
	}
	return ann.NodeSelector.String()
}
