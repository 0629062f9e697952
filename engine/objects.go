package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/runner"
)

// object is what the engine keeps of one object between reconciles.
type object struct {
	// ref is the object's identity as last reconciled (a Service's uid
	// changes when it is created again under its name).
	ref objectref.Ref
	// inputs digests the Kubernetes inputs (Service, nodes) that rendered
	// job: equal inputs render an equal module, so an unchanged Service is
	// answered from the runner's record without rendering (hclwrite
	// formatting dominates the cost of a no-op).
	inputs string
	job    runner.Job
	// service is the Service job was rendered from (nil for the route set).
	service *corev1.Service
	// group is the group job was rendered from (nil but for groups).
	group  *groupState
	review Review
	// pending is the plan waiting for a decision, if any.
	pending *pending
	// waiting is the plan that waits for a decision as it was first made
	// (waiting.go): kept when pending's file is dropped, until a plan of
	// another id supersedes it or the object is as its inputs say.
	waiting *runner.Plan
	// looked: the plan store was asked what it keeps (once per process;
	// later the engine's memory knows more); kept is its answer until a
	// reconcile used it.
	looked  bool
	kept    *Kept
	loading *loading
	// converged: job was applied (drift checks cover only those).
	converged bool
	// migrated: the state is known to be off its legacy key (checked
	// once per process, see MigrateState).
	migrated bool
	// orphanChecked: a deletion looked for a load balancer its state does
	// not hold (once per process, see adoptOrphan).
	orphanChecked bool
	// certificatesChecked: the certificates an interrupted apply uploaded
	// were looked for (once per process and after a failed run, see
	// recoverCertificates).
	certificatesChecked bool
}

// pending is a plan with changes that was not applied: awaiting approval,
// denied by a rule, or only planned (plan-only).
type pending struct {
	plan     *runner.Plan
	verdicts []policy.Verdict
}

func (p *pending) denied() *policy.Verdict { return policy.Denied(p.verdicts) }

// objects holds every object's state: one map by Ref.Key, one lock.
type objects struct {
	mu sync.Mutex
	m  map[string]*object
}

// len is how many objects it holds.
func (o *objects) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.m)
}

// with runs fn on ref's object (created empty if missing) under the lock.
func (o *objects) with(ref objectref.Ref, fn func(*object)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*object{}
	}
	obj := o.m[ref.Key()]
	if obj == nil {
		obj = &object{}
		o.m[ref.Key()] = obj
	}
	obj.ref = ref
	fn(obj)
}

// get returns a copy of ref's object.
func (o *objects) get(ref objectref.Ref) (object, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	obj, ok := o.m[ref.Key()]
	if !ok {
		return object{}, false
	}
	return *obj, true
}

func (o *objects) forget(ref objectref.Ref) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, ref.Key())
}

// ForgetUnowned forgets every object this replica does not own now
// (Options.Owns): when its shard comes back, its first reconcile reads
// its record again, as another replica may have applied it meanwhile.
// It returns how many it forgot.
func (e *Engine) ForgetUnowned() int {
	if e.owns == nil {
		return 0
	}
	return e.Forget(func(ref objectref.Ref) bool { return !e.owns(ref) })
}

// Forget forgets the objects match says, as ForgetUnowned does: a shard
// just taken is read from the records again, whatever this replica knew
// of it from before (a reconcile it began, a record read, before the
// shard went away and came back). It returns how many it forgot.
func (e *Engine) Forget(match func(objectref.Ref) bool) int {
	e.objects.mu.Lock()
	defer e.objects.mu.Unlock()
	n := 0
	for key, o := range e.objects.m {
		if match(o.ref) {
			delete(e.objects.m, key)
			n++
		}
	}
	return n
}

// Known is an object the engine has converged, with what a drift check
// needs to plan it again.
type Known struct {
	Ref     objectref.Ref
	Service *corev1.Service // nil for the route set
	// Group is the group a group's job was rendered from (nil for others).
	Group  *KnownGroup
	Job    runner.Job
	Review Review
}

// Known lists the converged objects, sorted by key: what drift checks cover.
func (e *Engine) Known() []Known {
	e.objects.mu.Lock()
	defer e.objects.mu.Unlock()
	var out []Known
	for _, o := range e.objects.m {
		if o.converged {
			kn := Known{Ref: o.ref, Service: o.service, Job: o.job, Review: o.review}
			if o.group != nil {
				g := o.group.KnownGroup
				kn.Group = &g
			}
			out = append(out, kn)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.Key() < out[j].Ref.Key() })
	return out
}

// Pending is the plan waiting for a decision for ref, if any.
func (e *Engine) Pending(ref objectref.Ref) *runner.Plan {
	o, _ := e.objects.get(ref)
	if o.pending == nil {
		return nil
	}
	return o.pending.plan
}

// ServiceInputs digests everything of a Service and its nodes that the
// renderer reads; node order does not matter.
func ServiceInputs(svc *corev1.Service, nodes []*corev1.Node) string {
	type nodeIn struct {
		Name       string            `json:"n"`
		ProviderID string            `json:"p"`
		Labels     map[string]string `json:"l,omitempty"`
	}
	ns := make([]nodeIn, 0, len(nodes))
	for _, n := range nodes {
		ns = append(ns, nodeIn{n.Name, n.Spec.ProviderID, n.Labels})
	}
	slices.SortFunc(ns, func(a, b nodeIn) int { return strings.Compare(a.Name+"\x00"+a.ProviderID, b.Name+"\x00"+b.ProviderID) })
	data, err := json.Marshal(struct {
		Name, Namespace, UID string
		Annotations          map[string]string
		Spec                 corev1.ServiceSpec
		Nodes                []nodeIn
	}{svc.Name, svc.Namespace, string(svc.UID), svc.Annotations, svc.Spec, ns})
	if err != nil {
		return "" // never matches: render
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// converge reconciles ref to j under rv and keeps the engine's view of
// it: set (its inputs, Service, group...) is applied to its object with
// the job before, and the object counts as converged once j is applied
// (or was). Another job in between leaves it unconverged.
func (e *Engine) converge(ctx context.Context, ref objectref.Ref, j runner.Job, rv Review, ro runOptions, set func(*object)) (*Outcome, error) {
	e.objects.with(ref, func(o *object) {
		if o.job.Hash != j.Hash {
			o.converged = false
		}
		o.job, o.review = j, rv
		if set != nil {
			set(o)
		}
	})
	out, err := e.reconcile(ctx, ref, j, rv, ro)
	if err == nil && out.Result != nil {
		e.objects.with(ref, func(o *object) {
			if o.job.Hash == j.Hash {
				o.converged = true
			}
		})
	}
	return out, err
}
