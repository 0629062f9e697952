package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Load balancer groups: Services sharing one load balancer, one workspace
// per group rendered from all its members (docs/shared-load-balancers.md).
// Whichever member's reconcile comes first converges it; the workspace's
// lock serialises them, and the others are fast paths.

// KnownGroup is a group as a drift check needs it.
type KnownGroup struct {
	Namespace, Name string
	// Members are those it was rendered from (also those left out).
	Members []*corev1.Service
	PoolID  string
}

// groupState is what the engine keeps of a group between reconciles.
type groupState struct {
	KnownGroup
	// report is the rendering's, for the fast path (equal inputs, equal
	// report).
	report *renderer.GroupReport
}

// RenderGroup renders the group's root module from its members, exactly
// as ReconcileGroup would apply it: forwarding to target pool poolID when
// set, else to nodes.
func (e *Engine) RenderGroup(g lbmodel.Group, nodes []*corev1.Node, poolID string) (*renderer.Module, *renderer.GroupReport, runner.Job, error) {
	tg, cfg, err := e.location(objectref.Group(g.Namespace, g.Name))
	if err != nil {
		return nil, nil, runner.Job{}, fmt.Errorf("load balancer group %s: %w", g, err)
	}
	cfg.TargetPoolID = poolID
	m, rep, err := renderer.GroupLoadBalancer(g, nodes, cfg)
	if err != nil {
		return nil, rep, runner.Job{}, err
	}
	// No owner: runner tombstones are per owner, and a group destroyed
	// (its last member left) is created again when a Service joins.
	j := job(tg, m, "")
	j.Share = g.Namespace // the group's home namespace
	return m, rep, j, nil
}

// GroupInputs digests the group's members (in any order), nodes and pool.
func GroupInputs(g lbmodel.Group, nodes []*corev1.Node, poolID string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", g.Namespace, g.Name, poolID)
	for _, m := range renderer.SortMembers(g.Namespace, g.Members) {
		// Creation orders members: it is part of the inputs.
		fmt.Fprintf(h, "%s\x00%s\x00", ServiceInputs(m, nil), m.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
	}
	h.Write([]byte(ServiceInputs(&corev1.Service{}, nodes)))
	return hex.EncodeToString(h.Sum(nil))
}

// ReconcileGroup converges the group's shared load balancer to its
// members under rv (see Review), forwarding to target pool poolID when
// set, else to nodes. The report says what became of each member
// (left out, listeners lost to an earlier member, settings ignored); it
// is there also when nothing changed. Equal inputs cost no terraform
// process and no rendering. A group needs a member: the last one leaving
// is RemoveGroup.
func (e *Engine) ReconcileGroup(ctx context.Context, g lbmodel.Group, nodes []*corev1.Node, poolID string, rv Review) (*LoadBalancer, *renderer.GroupReport, *Outcome, error) {
	ref := objectref.Group(g.Namespace, g.Name)
	inputs := GroupInputs(g, nodes, poolID)
	if o, ok := e.objects.get(ref); ok && o.inputs == inputs && o.converged && o.pending == nil && o.group != nil {
		if res, ok := e.runner.FastPath(o.job.Key, o.job.Hash, 0); ok {
			e.objects.with(ref, func(o *object) { o.review = rv })
			return loadBalancerFrom(res), o.group.report, &Outcome{Policy: rv.Policy, Result: res, InputsDigest: inputs}, nil
		}
	}
	_, rep, j, err := e.RenderGroup(g, nodes, poolID)
	if err != nil {
		return nil, rep, &Outcome{Policy: rv.Policy, InputsDigest: inputs}, err
	}
	gs := &groupState{KnownGroup: KnownGroup{Namespace: g.Namespace, Name: g.Name, Members: g.Members, PoolID: poolID}, report: rep}
	out, err := e.converge(ctx, ref, j, rv, runOptions{}, func(o *object) { o.inputs, o.group = inputs, gs })
	out.InputsDigest = inputs
	if err != nil && !isDecision(err) {
		err = fmt.Errorf("load balancer group %s: %w", g, err)
	}
	if out.Result != nil {
		return loadBalancerFrom(out.Result), rep, out, err
	}
	return nil, rep, out, err
}

// RemoveGroup destroys the group's load balancer under rv, its last
// member having left, and deletes its state and workspace; removing what
// does not exist succeeds. g holds the members that left: the destroy is
// planned from the group's last rendering in this process, else from
// theirs (a destroy needs the backend and the module call, not the
// members' values).
func (e *Engine) RemoveGroup(ctx context.Context, g lbmodel.Group, rv Review) (*Outcome, error) {
	ref := objectref.Group(g.Namespace, g.Name)
	j, err := e.groupJob(g)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, fmt.Errorf("delete load balancer group %s: %w", g, err)
	}
	var recovered bool
	e.objects.with(ref, func(o *object) {
		o.converged, o.job, o.review, o.inputs, o.group = false, j, rv, "", nil
		recovered, o.orphanChecked = o.orphanChecked, true
	})
	var id string
	if !recovered {
		name, owner := e.groupOwner(g)
		if id, err = e.recoverOrphan(ctx, ref, j, name, owner); err != nil {
			e.objects.with(ref, func(o *object) { o.orphanChecked = false })
			return &Outcome{Policy: rv.Policy, Workspace: j.Key}, fmt.Errorf("delete load balancer group %s: %w", g, err)
		}
	}
	out, err := e.reconcile(ctx, ref, j, rv, runOptions{destroy: true})
	out.Recovered = id
	if err == nil && out.Result != nil {
		e.objects.forget(ref) // destroyed: nothing of it is kept
	}
	if err != nil && !isDecision(err) {
		err = fmt.Errorf("delete load balancer group %s: %w", g, err)
	}
	return out, err
}

// GetGroupLoadBalancer reads the group's load balancer from the recorded
// outputs or the state, without a plan; exists is false when there is
// none. g's members only help name the workspace's files.
func (e *Engine) GetGroupLoadBalancer(ctx context.Context, g lbmodel.Group) (lb *LoadBalancer, exists bool, err error) {
	j, err := e.groupJob(g)
	if err != nil {
		return nil, false, err
	}
	if _, err := e.load(ctx, objectref.Group(g.Namespace, g.Name), j); err != nil {
		return nil, false, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if errors.Is(err, runner.ErrGone) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read load balancer of group %s: %w", g, err)
	}
	lb = loadBalancerFrom(&runner.Result{Outputs: outs})
	return lb, lb != nil, nil
}

// GroupReport is the report of the group's last rendering in this
// process, nil if none.
func (e *Engine) GroupReport(namespace, name string) *renderer.GroupReport {
	o, _ := e.objects.get(objectref.Group(namespace, name))
	if o.group == nil {
		return nil
	}
	return o.group.report
}

// groupJob is a job for the group's workspace when its members may be
// gone: the last rendering in this process, else one of g's members, else
// a shell (the backend, provider and module call of a group of one
// placeholder port: enough for a destroy or an output read).
func (e *Engine) groupJob(g lbmodel.Group) (runner.Job, error) {
	if o, ok := e.objects.get(objectref.Group(g.Namespace, g.Name)); ok && o.job.Key != "" {
		return o.job, nil
	}
	if len(g.Members) > 0 {
		if _, _, j, err := e.RenderGroup(g, nil, ""); err == nil {
			return j, nil
		}
	}
	shell := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 1, NodePort: 1}}},
	}
	_, _, j, err := e.RenderGroup(lbmodel.Group{Namespace: g.Namespace, Name: g.Name, Members: []*corev1.Service{shell}}, nil, "")
	return j, err
}

// isDecision: the error is a plan waiting for approval or denied, which
// callers report as is.
func isDecision(err error) bool {
	var wait *AwaitingApprovalError
	var denied *DeniedError
	return errors.As(err, &wait) || errors.As(err, &denied)
}
