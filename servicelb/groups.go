package servicelb

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// groupIndex indexes the Service informer by the group a Service names
// (namespace/name), so a group's members are one lookup.
const groupIndex = "loadbalancer.example.com/group"

func groupIndexFunc(obj any) ([]string, error) {
	svc, ok := obj.(*v1.Service)
	if !ok {
		return nil, nil
	}
	g, err := annotations.ParseGroup(svc.Annotations)
	if err != nil || g.Name == "" {
		return nil, nil
	}
	return []string{g.In(svc.Namespace).String()}, nil
}

// groups knows the load balancer groups (docs/shared-load-balancers.md):
// which group a Service asks for, a group's members now (the Service
// informer), and which groups each Service was last applied in (the group
// records' members, read once, then kept up to date here).
type groups struct {
	cfg *cloudconfig.Config
	// services is the Service informer's indexer (nil until SetInformers).
	services cache.Indexer
	// records lists the plan records (nil: none kept).
	records func(ctx context.Context) ([]*records.Record, error)
	// refs decides whether a Service may join a group of another
	// namespace, and the rest of what a member references: a member the
	// boundary refuses is no member (nil: every reference refused across
	// namespaces).
	refs *references

	mu     sync.Mutex
	locks  map[annotations.Group]*groupLock
	seeded bool
	// applied are each group's members as applied (and, while a plan
	// waits, those it would apply).
	applied map[annotations.Group][]objectref.Ref
	// nodes are the last nodes the service controller passed: a member
	// leaving by deletion comes without them.
	nodes []*v1.Node
}

func newGroups(cfg *cloudconfig.Config) *groups {
	return &groups{cfg: cfg, applied: map[annotations.Group][]objectref.Ref{}}
}

// lock serialises g's reconciles; it returns the unlock. A group's lock
// is kept while someone holds or waits for it, so the locks are those of
// the groups reconciling now, not of every group ever named.
func (gs *groups) lock(g annotations.Group) func() {
	gs.mu.Lock()
	if gs.locks == nil {
		gs.locks = map[annotations.Group]*groupLock{}
	}
	m := gs.locks[g]
	if m == nil {
		m = &groupLock{}
		gs.locks[g] = m
	}
	m.users++
	gs.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		gs.mu.Lock()
		defer gs.mu.Unlock()
		if m.users--; m.users == 0 {
			delete(gs.locks, g)
		}
	}
}

// groupLock is a group's lock and how many hold or wait for it (gs.mu).
type groupLock struct {
	sync.Mutex
	users int
}

// of is the group svc asks for, zero for none; an error when its
// annotation is invalid or the tenant boundary refuses what it references
// (a group of another namespace without its consent, another tenant's
// certificate): such a Service is no member.
func (gs *groups) of(svc *v1.Service) (annotations.Group, error) {
	g, err := annotations.ParseGroup(svc.Annotations)
	if err != nil || g.Name == "" {
		return annotations.Group{}, err
	}
	g = g.In(svc.Namespace)
	ctx, cancel := context.WithTimeout(context.Background(), referencesTimeout)
	defer cancel()
	if err := gs.refs.authorize(ctx, annotations.Read(svc)); err != nil {
		return g, err
	}
	return g, nil
}

// isMember tells whether svc is a member of g now: one of this
// controller's Services (another controller's naming the group changes
// nothing of it).
func (gs *groups) isMember(svc *v1.Service, g annotations.Group) bool {
	if !ours(svc) || svc.DeletionTimestamp != nil {
		return false
	}
	mine, err := gs.of(svc)
	return err == nil && mine == g
}

// naming are the Services in the informer whose annotation may name g
// (every Service without the index).
func (gs *groups) naming(g annotations.Group) []*v1.Service {
	if gs.services == nil {
		return nil
	}
	objs, err := gs.services.ByIndex(groupIndex, g.String())
	if err != nil {
		objs = gs.services.List() // no index: every Service
	}
	var out []*v1.Service
	for _, o := range objs {
		if svc, ok := o.(*v1.Service); ok {
			out = append(out, svc)
		}
	}
	return out
}

// members are g's members now, from the informer, with self as the call
// gives it (the informer may lag) unless leaving. Unsorted.
func (gs *groups) members(g annotations.Group, self *v1.Service, leaving bool) []*v1.Service {
	var out []*v1.Service
	for _, svc := range gs.naming(g) {
		if self != nil && svc.Namespace == self.Namespace && svc.Name == self.Name {
			continue
		}
		if gs.isMember(svc, g) {
			out = append(out, svc)
		}
	}
	if self != nil && !leaving && gs.isMember(self, g) {
		out = append(out, self)
	}
	return out
}

// formerOf are the groups svc was last applied in, sorted.
func (gs *groups) formerOf(ctx context.Context, svc *v1.Service) []annotations.Group {
	gs.seed(ctx)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	var out []annotations.Group
	for g, ms := range gs.applied {
		if slices.ContainsFunc(ms, func(m objectref.Ref) bool { return isRef(m, svc) }) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b annotations.Group) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// appliedMember tells whether svc was last applied in g.
func (gs *groups) appliedMember(ctx context.Context, g annotations.Group, svc *v1.Service) bool {
	return slices.Contains(gs.formerOf(ctx, svc), g)
}

func isRef(m objectref.Ref, svc *v1.Service) bool {
	return m.Namespace == svc.Namespace && m.Name == svc.Name && (m.UID == "" || m.UID == string(svc.UID))
}

// appliedTo are g's members as last applied (and those a waiting plan
// would apply).
func (gs *groups) appliedTo(ctx context.Context, g annotations.Group) []objectref.Ref {
	gs.seed(ctx)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return slices.Clone(gs.applied[g])
}

// withGuests are the groups of namespace ("": of every namespace) that
// have or had members of another namespace: those named by a Service of
// another namespace (the informer), and those applied with one. Sorted.
func (gs *groups) withGuests(ctx context.Context, namespace string) []annotations.Group {
	found := map[annotations.Group]bool{}
	ours := func(g annotations.Group) bool { return namespace == "" || g.Namespace == namespace }
	if gs.services != nil {
		for _, key := range gs.services.ListIndexFuncValues(groupIndex) {
			ns, name, _ := strings.Cut(key, "/")
			g := annotations.Group{Namespace: ns, Name: name}
			if ours(g) && slices.ContainsFunc(gs.naming(g), func(svc *v1.Service) bool { return svc.Namespace != g.Namespace }) {
				found[g] = true
			}
		}
	}
	gs.seed(ctx)
	gs.mu.Lock()
	for g, ms := range gs.applied {
		if ours(g) && slices.ContainsFunc(ms, func(m objectref.Ref) bool { return m.Namespace != g.Namespace }) {
			found[g] = true
		}
	}
	gs.mu.Unlock()
	out := slices.Collect(maps.Keys(found))
	slices.SortFunc(out, func(a, b annotations.Group) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// seed reads, once, the members of every group record.
func (gs *groups) seed(ctx context.Context) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.seeded || gs.records == nil {
		return
	}
	all, err := gs.records(ctx)
	if err != nil {
		klog.ErrorS(err, "cannot read the load balancer groups' members from their records; trying again at the next reconcile")
		return
	}
	for _, r := range all {
		if r.Object.Kind == objectref.KindServiceGroup && len(r.Members) > 0 {
			g := annotations.Group{Namespace: r.Object.Namespace, Name: r.Object.Name}
			gs.applied[g] = union(gs.applied[g], r.Members)
		}
	}
	gs.seeded = true
}

// remember records g's members as rendered: what it serves once applied;
// until then also those it served.
func (gs *groups) remember(g annotations.Group, members []*v1.Service, applied bool) {
	refs := memberRefs(members)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if !applied {
		refs = union(gs.applied[g], refs)
	}
	if len(refs) == 0 {
		delete(gs.applied, g)
		return
	}
	gs.applied[g] = refs
}

// followers are the members of g applied before, but for self: those whose
// status follows the group's address.
func (gs *groups) followers(g annotations.Group, rendered []*v1.Service, self *v1.Service) []*v1.Service {
	gs.mu.Lock()
	before := gs.applied[g]
	gs.mu.Unlock()
	var out []*v1.Service
	for _, m := range rendered {
		if m != self && slices.ContainsFunc(before, func(r objectref.Ref) bool { return isRef(r, m) }) {
			out = append(out, m)
		}
	}
	return out
}

// seen keeps the nodes of a call; lastNodes returns them (nil: none yet).
func (gs *groups) seen(nodes []*v1.Node) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.nodes = nodes
}

func (gs *groups) lastNodes() []*v1.Node {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.nodes
}

// memberRefs names members as records do: namespace, name, uid.
func memberRefs(members []*v1.Service) []objectref.Ref {
	out := make([]objectref.Ref, 0, len(members))
	for _, m := range members {
		out = append(out, objectref.Service(m))
	}
	return out
}

// union is a's refs, then b's not in a.
func union(a, b []objectref.Ref) []objectref.Ref {
	out := slices.Clone(a)
	for _, r := range b {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
