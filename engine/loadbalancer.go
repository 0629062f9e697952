package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/servicemodel"
)

// LoadBalancer is what the cloud reports about a Service's load balancer,
// from the root module's outputs.
type LoadBalancer struct {
	ID       string
	IPv4     string
	IPv6     string
	Hostname string
	// Status is provisioning, active or error.
	Status string
	// Delay is the deregistration delay its applied configuration asks of
	// its target pool; nil: none asked (the cluster's).
	Delay *time.Duration
	// HeldRoutes are the routes (lbmodel.RouteRef keys) whose rules a
	// Gateway's load balancer holds itself (renderer.HeldRoutesOutput);
	// AllRoutesHeld: its root has no such output, rendered before rule
	// sets, when it held every route's (docs/adr/0028).
	HeldRoutes    []string
	AllRoutesHeld bool
}

// AskedDelay reads, from a root module's outputs (an apply's, or a plan
// record's last apply), the deregistration delay its load balancer asks
// of its target pool (renderer.DelayOutput); nil when it asks none.
func AskedDelay(outputs map[string]json.RawMessage) *time.Duration {
	var secs *int64
	if err := json.Unmarshal(outputs[renderer.DelayOutput], &secs); err != nil || secs == nil {
		return nil
	}
	d := time.Duration(*secs) * time.Second
	return &d
}

func loadBalancerFrom(res *runner.Result) *LoadBalancer {
	if res == nil || res.Output("id") == "" {
		return nil
	}
	lb := &LoadBalancer{
		ID:       res.Output("id"),
		IPv4:     res.Output("ipv4"),
		IPv6:     res.Output("ipv6"),
		Hostname: res.Output("hostname"),
		Status:   res.Output("status"),
		Delay:    AskedDelay(res.Outputs),
	}
	lb.HeldRoutes, lb.AllRoutesHeld = HeldRoutes(res.Outputs)
	return lb
}

// HeldRoutes reads, from a Gateway's root module outputs (an apply's, or
// a plan record's last apply), renderer.HeldRoutesOutput: all when it is
// missing (or unreadable: holding more is the safe side).
func HeldRoutes(outputs map[string]json.RawMessage) (routes []string, all bool) {
	raw, ok := outputs[renderer.HeldRoutesOutput]
	if !ok || json.Unmarshal(raw, &routes) != nil {
		return nil, true
	}
	return routes, false
}

// RenderLoadBalancer renders the Service's root module exactly as
// ReconcileLoadBalancer would apply it, given its TLS Secrets' content
// (tls; nil renders it as if it named none, as for a destroy).
func (e *Engine) RenderLoadBalancer(in *annotations.Service, nodes []*corev1.Node, tls *TLS) (*renderer.Module, runner.Job, error) {
	return e.renderService(in, forward{nodes: nodes}, tls)
}

// RenderLoadBalancerOnPool renders the Service's root module exactly as
// ReconcileLoadBalancerOnPool would apply it (tls as for
// RenderLoadBalancer).
func (e *Engine) RenderLoadBalancerOnPool(in *annotations.Service, poolID string, tls *TLS) (*renderer.Module, runner.Job, error) {
	return e.renderService(in, forward{poolID: poolID}, tls)
}

// RenderLoadBalancerOnPods renders the Service's root module exactly as
// ReconcileLoadBalancerOnPods would apply it (tls as for
// RenderLoadBalancer).
func (e *Engine) RenderLoadBalancerOnPods(in *annotations.Service, pods map[lbmodel.ServicePort]string, tls *TLS) (*renderer.Module, runner.Job, error) {
	return e.renderService(in, forward{pods: pods}, tls)
}

// forward is where a Service's load balancer forwards: to nodes, to the
// target pool poolID holding them, or (target type ip) to each Service
// port's pod pool, pods. forKey renders it for its workspace alone (a
// read, a destroy): without the rules, which need the pod pools' ids.
type forward struct {
	nodes  []*corev1.Node
	poolID string
	pods   map[lbmodel.ServicePort]string
	forKey bool
}

// digest is what of f a Service's inputs digest holds beside its nodes.
func (f forward) digest() string {
	d := ""
	if f.poolID != "" {
		d += "/" + f.poolID
	}
	for _, sp := range slices.SortedFunc(maps.Keys(f.pods), func(a, b lbmodel.ServicePort) int { return cmp.Compare(a.String(), b.String()) }) {
		d += "/" + sp.String() + "=" + f.pods[sp]
	}
	return d
}

// renderService renders svc's root module, forwarding as fwd says; with
// tls, its certificates, whose keys go into the job's environment. The
// Service is translated here into the description the renderer renders
// (servicemodel.Translate): the renderer never reads it.
func (e *Engine) renderService(in *annotations.Service, fwd forward, tls *TLS) (*renderer.Module, runner.Job, error) {
	svc := in.Service
	tg, cfg, err := e.location(objectref.Service(svc))
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), err)
	}
	cfg.TargetPoolID = fwd.poolID
	cfg = withTLS(cfg, tls)
	lb, err := servicemodel.Translate(in, fwd.nodes, cfg.Service())
	if err == nil && len(lb.PodPorts()) > 0 {
		if fwd.forKey {
			lb.Rules = nil
		} else {
			err = lb.SetPodPools(fwd.pods)
		}
	}
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("render %s: %w", objectref.Service(svc).Describe(), err)
	}
	m, err := renderer.ServiceLoadBalancer(lb, cfg)
	if err != nil {
		return nil, runner.Job{}, err
	}
	j := job(tg, m, string(svc.UID))
	j.Share = svc.Namespace
	if err := addKeys(&j, tls); err != nil {
		return nil, runner.Job{}, fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), err)
	}
	return m, j, nil
}

// LoadBalancerWorkspace is the job of the Service's workspace, for what
// needs no more (its state lock): also for a Service no longer of type
// LoadBalancer, whose load balancer is going.
func (e *Engine) LoadBalancerWorkspace(in *annotations.Service) (runner.Job, error) {
	return e.renderForKey(in)
}

// renderForKey renders svc for what needs only its workspace (outputs,
// destroy, unlock): without reading its Secrets.
// A Service no longer of type LoadBalancer (whose load balancer goes) is
// rendered as if it still were: only the workspace matters.
func (e *Engine) renderForKey(in *annotations.Service) (runner.Job, error) {
	if in.Spec.Type != corev1.ServiceTypeLoadBalancer {
		svc := in.DeepCopy()
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		in = &annotations.Service{Service: svc, LB: in.LB, Err: in.Err}
	}
	_, j, err := e.renderService(in, forward{forKey: true}, nil)
	return j, err
}

// GetLoadBalancer reads the Service's load balancer from the recorded
// outputs or the state, without a plan; when the state holds none, it
// looks for one an interrupted apply created (FindOrphan). exists is
// false when there is none.
func (e *Engine) GetLoadBalancer(ctx context.Context, in *annotations.Service) (lb *LoadBalancer, exists bool, err error) {
	svc := in.Service
	j, err := e.renderForKey(in)
	if err != nil {
		return nil, false, err
	}
	if _, err := e.load(ctx, objectref.Service(svc), j); err != nil { // a restart: the record's outputs
		return nil, false, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if errors.Is(err, runner.ErrGone) {
		return nil, false, nil // destroyed
	}
	if err != nil {
		return nil, false, fmt.Errorf("read load balancer of %s: %w", objectref.Service(svc).Describe(), err)
	}
	if lb = loadBalancerFrom(&runner.Result{Outputs: outs}); lb != nil {
		return lb, true, nil
	}
	// The state holds none, but an interrupted apply may have created one:
	// the service controller asks this before a deletion, and would drop
	// the Service's finalizer (and leave the load balancer behind) on
	// "does not exist".
	if e.findOrphan != nil {
		name, owner := e.serviceOwner(in)
		id, err := e.findOrphan(ctx, name, owner)
		if err != nil {
			return nil, false, fmt.Errorf("read load balancer of %s: %w", objectref.Service(svc).Describe(), err)
		}
		if id != "" {
			return &LoadBalancer{ID: id}, true, nil
		}
	}
	return nil, false, nil
}

// ReconcileLoadBalancer converges the Service's load balancer under rv
// (see Review). While a plan waits the error is an
// *AwaitingApprovalError, for a denied plan a *DeniedError. An unchanged
// Service costs no terraform process and no rendering.
func (e *Engine) ReconcileLoadBalancer(ctx context.Context, in *annotations.Service, nodes []*corev1.Node, rv Review) (*LoadBalancer, *Outcome, error) {
	return e.reconcileService(ctx, in, forward{nodes: nodes}, rv)
}

// ReconcileLoadBalancerOnPool is ReconcileLoadBalancer for a load balancer
// that forwards to target pool poolID (ReconcileTargetPools): its
// rendering does not depend on the nodes, so a node joining or leaving
// changes nothing of it.
func (e *Engine) ReconcileLoadBalancerOnPool(ctx context.Context, in *annotations.Service, poolID string, rv Review) (*LoadBalancer, *Outcome, error) {
	return e.reconcileService(ctx, in, forward{poolID: poolID}, rv)
}

// ReconcileLoadBalancerOnPods is ReconcileLoadBalancer for a Service of
// target type ip: each listener's rule forwards to its Service port's pod
// pool, of the id pods gives it (package podpools keeps them), so a
// rollout changes nothing of it.
func (e *Engine) ReconcileLoadBalancerOnPods(ctx context.Context, in *annotations.Service, pods map[lbmodel.ServicePort]string, rv Review) (*LoadBalancer, *Outcome, error) {
	return e.reconcileService(ctx, in, forward{pods: pods}, rv)
}

func (e *Engine) reconcileService(ctx context.Context, in *annotations.Service, fwd forward, rv Review) (*LoadBalancer, *Outcome, error) {
	svc := in.Service
	ref := objectref.Service(svc)
	tls, err := e.tlsFor(ctx, svc)
	if err != nil {
		return nil, &Outcome{Policy: rv.Policy}, fmt.Errorf("load balancer for %s: %w", objectref.Service(svc).Describe(), err)
	}
	inputs := ServiceInputs(svc, fwd.nodes) + tls.digest() + fwd.digest()
	if o, ok := e.objects.get(ref); ok && o.inputs == inputs && o.converged && o.pending == nil {
		if res, ok := e.runner.FastPath(o.job.Key, o.job.Hash, 0); ok {
			e.objects.with(ref, func(o *object) { o.service, o.review = svc, rv })
			return loadBalancerFrom(res), &Outcome{Policy: rv.Policy, Result: res, InputsDigest: inputs}, nil
		}
	}
	_, j, err := e.renderService(in, fwd, tls)
	if err != nil {
		return nil, &Outcome{Policy: rv.Policy, InputsDigest: inputs}, err
	}
	ro := runOptions{state: e.stateObject(objectref.Service(svc))}
	var recovered []string
	if o, _ := e.objects.get(ref); !o.certificatesChecked {
		ro.beforePlan = func(ctx context.Context) (err error) {
			_, owner := e.serviceOwner(in)
			recovered, err = e.recoverCertificates(ctx, j, tls, owner)
			e.objects.with(ref, func(o *object) { o.certificatesChecked = err == nil })
			return err
		}
	}
	out, err := e.converge(ctx, ref, j, rv, ro, func(o *object) { o.inputs, o.service = inputs, svc })
	out.InputsDigest, out.RecoveredCertificates = inputs, recovered
	var wait *AwaitingApprovalError
	var denied *DeniedError
	if err != nil && !errors.As(err, &wait) && !errors.As(err, &denied) {
		// The run may have been cut short after an upload: look again.
		e.objects.with(ref, func(o *object) { o.certificatesChecked = false })
		err = fmt.Errorf("load balancer for %s: %w", objectref.Service(svc).Describe(), err)
	}
	if out.Result != nil {
		return loadBalancerFrom(out.Result), out, err
	}
	return nil, out, err
}

// RemoveLoadBalancer destroys the Service's load balancer under rv and
// deletes its state and workspace; deleting what does not exist succeeds.
// A destroy plan waits for approval like any other.
func (e *Engine) RemoveLoadBalancer(ctx context.Context, in *annotations.Service, rv Review) (*Outcome, error) {
	return e.removeService(ctx, in, rv, false)
}

// ReleaseLoadBalancer is RemoveLoadBalancer for a Service that lives on,
// served by a group's load balancer now: nothing keeps it from having one
// of its own again (no tombstone).
func (e *Engine) ReleaseLoadBalancer(ctx context.Context, in *annotations.Service, rv Review) (*Outcome, error) {
	return e.removeService(ctx, in, rv, true)
}

func (e *Engine) removeService(ctx context.Context, in *annotations.Service, rv Review, release bool) (*Outcome, error) {
	svc := in.Service
	j, err := e.renderForKey(in)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	if release {
		j.Owner = "" // runner tombstones are per owner
	}
	ref := objectref.Service(svc)
	var adopted bool
	e.objects.with(ref, func(o *object) {
		o.converged, o.job, o.service, o.review, o.inputs = false, j, svc, rv, ""
		adopted, o.orphanChecked = o.orphanChecked, true
	})
	so := e.stateObject(objectref.Service(svc))
	var recovered string
	var certs []string
	if !adopted {
		// The state first moves off a legacy key: what it holds is not an
		// orphan.
		if err := e.migrate(ctx, ref, j, so); err != nil {
			e.objects.with(ref, func(o *object) { o.orphanChecked = false })
			return &Outcome{Policy: rv.Policy, Workspace: j.Key}, fmt.Errorf("delete load balancer of %s: %w", objectref.Service(svc).Describe(), err)
		}
		if recovered, err = e.adoptOrphan(ctx, in, j); err != nil {
			e.objects.with(ref, func(o *object) { o.orphanChecked = false })
			return &Outcome{Policy: rv.Policy, Workspace: j.Key}, fmt.Errorf("delete load balancer of %s: %w", objectref.Service(svc).Describe(), err)
		}
		if certs, err = e.recoverServiceCertificates(ctx, in); err != nil {
			e.objects.with(ref, func(o *object) { o.orphanChecked = false })
			return &Outcome{Policy: rv.Policy, Workspace: j.Key}, fmt.Errorf("delete load balancer of %s: %w", objectref.Service(svc).Describe(), err)
		}
	}
	out, err := e.reconcile(ctx, ref, j, rv, runOptions{destroy: true, state: so})
	out.Recovered, out.RecoveredCertificates = recovered, certs
	if err == nil && out.Result != nil {
		e.objects.forget(ref) // destroyed: nothing of it is kept
	}
	var wait *AwaitingApprovalError
	var denied *DeniedError
	if err != nil && !errors.As(err, &wait) && !errors.As(err, &denied) {
		err = fmt.Errorf("delete load balancer of %s: %w", objectref.Service(svc).Describe(), err)
	}
	return out, err
}

// adoptOrphan imports into the Service's state the load balancer an
// interrupted apply created and could not record, when the state holds
// none: the deletion then destroys it rather than leaving it behind.
func (e *Engine) adoptOrphan(ctx context.Context, in *annotations.Service, j runner.Job) (string, error) {
	name, owner := e.serviceOwner(in)
	return e.recoverOrphan(ctx, objectref.Service(in.Service), j, name, owner)
}

// serviceOwner is the cloud name of svc's load balancer and the tags that
// name its owner.
func (e *Engine) serviceOwner(in *annotations.Service) (string, map[string]string) {
	return e.LoadBalancerName(in), renderer.OwnerTags(in.Service, e.render.ClusterID)
}

// recoverServiceCertificates imports, before svc's deletion, the
// certificates interrupted applies uploaded for it, so that the destroy
// destroys them too. Their addresses are those of the Service's TLS
// Secrets: with a Secret gone or unreadable, they are not looked for
// (logged).
func (e *Engine) recoverServiceCertificates(ctx context.Context, in *annotations.Service) ([]string, error) {
	svc := in.Service
	if e.findCertificates == nil {
		return nil, nil
	}
	tls, err := e.tlsFor(ctx, svc)
	if err != nil {
		klog.InfoS("Certificates an interrupted apply may have uploaded are not looked for: the TLS Secrets cannot be read", "service", klog.KObj(svc), "err", err)
		return nil, nil
	}
	if tls == nil {
		return nil, nil
	}
	_, j, err := e.renderService(in, forward{forKey: true}, tls)
	if err != nil {
		return nil, err
	}
	_, owner := e.serviceOwner(in)
	return e.recoverCertificates(ctx, j, tls, owner)
}
