package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

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
	obj, inputs := svc.Namespace+"/"+svc.Name, serviceInputs(svc, nodes)
	if m, ok := e.memo.get(obj, inputs); ok {
		if res, ok := e.runner.FastPath(m.workKey, m.module, 0); ok {
			return loadBalancerFrom(res), res, nil
		}
	}
	mod, j, err := e.RenderLoadBalancer(svc, nodes)
	if err != nil {
		return nil, nil, err
	}
	res, err := e.runner.Ensure(ctx, j, runner.EnsureOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("ensure load balancer for service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	e.memo.put(obj, memoEntry{inputs: inputs, module: mod.Hash, workKey: j.Key})
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
	res, err := e.runner.Destroy(ctx, j)
	if err != nil {
		return nil, fmt.Errorf("delete load balancer of service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return res, nil
}
