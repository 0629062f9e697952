package engine

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// KindService names Service states.
const KindService = "service"

// LoadBalancer is what the cloud reports about a Service's load balancer,
// from the root module's outputs.
type LoadBalancer struct {
	ID       string
	IPv4     string
	IPv6     string
	Hostname string
	// Status is provisioning, active or error.
	Status string
}

func loadBalancerFrom(res *runner.Result) *LoadBalancer {
	return &LoadBalancer{
		ID:       res.Output("id"),
		IPv4:     res.Output("ipv4"),
		IPv6:     res.Output("ipv6"),
		Hostname: res.Output("hostname"),
		Status:   res.Output("status"),
	}
}

// RenderLoadBalancer renders the Service's root module exactly as
// EnsureLoadBalancer would apply it.
func (e *Engine) RenderLoadBalancer(svc *corev1.Service, nodes []*corev1.Node) (*renderer.Module, runner.Job, error) {
	tg, cfg, err := e.target(KindService, svc.Namespace, svc.Name)
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	m, err := renderer.LoadBalancer(svc, nodes, cfg)
	if err != nil {
		return nil, runner.Job{}, err
	}
	return m, job(tg, m), nil
}

// EnsureLoadBalancer renders, plans and applies the Service's load
// balancer. An unchanged Service costs no terraform process.
func (e *Engine) EnsureLoadBalancer(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node) (*LoadBalancer, *runner.Result, error) {
	return e.ensureLoadBalancer(ctx, svc, nodes, serviceInputs(svc, nodes))
}

func (e *Engine) ensureLoadBalancer(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node, inputs string) (*LoadBalancer, *runner.Result, error) {
	obj := svc.Namespace + "/" + svc.Name
	if m, ok := e.memo.get(obj, inputs); ok {
		if res, ok := e.runner.FastPath(m.workKey, m.module, 0); ok {
			return loadBalancerFrom(res), res, nil
		}
	}
	mod, j, err := e.RenderLoadBalancer(svc, nodes)
	if err != nil {
		return nil, nil, err
	}
	res, err := e.runner.Ensure(ctx, j, runner.EnsureOptions{PlanText: e.planText})
	if err != nil {
		return nil, nil, fmt.Errorf("ensure load balancer for service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	e.memo.put(obj, memoEntry{inputs: inputs, module: mod.Hash, workKey: j.Key, job: j})
	return loadBalancerFrom(res), res, nil
}

// GetLoadBalancer reads the Service's load balancer from the recorded
// outputs or the state, without a plan. exists is false when nothing was
// ever applied for the Service.
func (e *Engine) GetLoadBalancer(ctx context.Context, svc *corev1.Service) (lb *LoadBalancer, exists bool, err error) {
	_, j, err := e.RenderLoadBalancer(svc, nil)
	if err != nil {
		return nil, false, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if err != nil {
		return nil, false, fmt.Errorf("read load balancer of service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	res := &runner.Result{Outputs: outs}
	if res.Output("id") == "" {
		return nil, false, nil
	}
	return loadBalancerFrom(res), true, nil
}

// DeleteLoadBalancer destroys the Service's load balancer and deletes its
// state and workspace. Deleting what does not exist succeeds.
func (e *Engine) DeleteLoadBalancer(ctx context.Context, svc *corev1.Service) (*runner.Result, error) {
	_, j, err := e.RenderLoadBalancer(svc, nil)
	if err != nil {
		return nil, err
	}
	e.memo.forget(svc.Namespace + "/" + svc.Name)
	e.known.forget(svc.Namespace + "/" + svc.Name)
	res, err := e.runner.Destroy(ctx, j)
	if err != nil {
		return nil, fmt.Errorf("delete load balancer of service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return res, nil
}

// ReconcileLoadBalancer converges the Service's load balancer under an
// apply policy: auto applies at once; manual applies a plan only once
// approved is its id; plan-only records plans and never applies. While a
// plan waits, the error is an *AwaitingApprovalError.
func (e *Engine) ReconcileLoadBalancer(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node, policy annotations.ApplyPolicy, approved string) (*LoadBalancer, *Outcome, error) {
	inputs := serviceInputs(svc, nodes)
	if policy == annotations.ApplyAuto {
		lb, res, err := e.ensureLoadBalancer(ctx, svc, nodes, inputs)
		out := autoOutcome(policy, res)
		out.InputsDigest = inputs
		if m, ok := e.memo.get(svc.Namespace+"/"+svc.Name, inputs); ok && err == nil {
			e.known.put(Known{Key: svc.Namespace + "/" + svc.Name, Service: svc, Job: m.job, Policy: policy})
			if !out.fastPath() {
				out.Workspace, out.Files = m.workKey, m.job.Files
			}
		} else if err != nil {
			// A failure is recorded too (a lock in the way, a plan error).
			if _, j, rerr := e.RenderLoadBalancer(svc, nodes); rerr == nil {
				out.Workspace, out.Files = j.Key, j.Files
			}
		}
		return lb, out, err
	}
	mod, j, err := e.RenderLoadBalancer(svc, nodes)
	if err != nil {
		return nil, &Outcome{Policy: policy}, err
	}
	e.known.put(Known{Key: svc.Namespace + "/" + svc.Name, Service: svc, Job: j, Policy: policy})
	out, err := e.gated(ctx, svc.Namespace+"/"+svc.Name, j, false, policy, approved)
	out.InputsDigest = inputs
	if out.Applied != nil {
		e.memo.put(svc.Namespace+"/"+svc.Name, memoEntry{inputs: inputs, module: mod.Hash, workKey: j.Key, job: j})
	}
	var lb *LoadBalancer
	if out.Result != nil && (&runner.Result{Outputs: out.Result.Outputs}).Output("id") != "" {
		lb = loadBalancerFrom(out.Result)
	}
	if err != nil {
		var wait *AwaitingApprovalError
		if !errors.As(err, &wait) {
			err = fmt.Errorf("load balancer for service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	}
	return lb, out, err
}

// RemoveLoadBalancer deletes the Service's load balancer under an apply
// policy (see ReconcileLoadBalancer): under manual the destroy plan waits
// for approval, under plan-only it is never applied.
func (e *Engine) RemoveLoadBalancer(ctx context.Context, svc *corev1.Service, policy annotations.ApplyPolicy, approved string) (*Outcome, error) {
	_, j, err := e.RenderLoadBalancer(svc, nil)
	if err != nil {
		return &Outcome{Policy: policy}, err
	}
	obj := svc.Namespace + "/" + svc.Name
	e.memo.forget(obj)
	e.known.forget(obj)
	if policy != annotations.ApplyAuto {
		return e.gated(ctx, obj, j, true, policy, approved)
	}
	res, err := e.runner.Destroy(ctx, j)
	out := autoOutcome(policy, res)
	out.Workspace, out.Files = j.Key, j.Files
	if err != nil {
		return out, fmt.Errorf("delete load balancer of service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return out, nil
}
