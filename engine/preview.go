package engine

import (
	"context"
	"errors"
	"fmt"

	tfjson "github.com/hashicorp/terraform-json"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/runner"
)

// PreviewLoadBalancer plans svc's load balancer as ReconcileLoadBalancer
// (poolID "", pods nil), ReconcileLoadBalancerOnPool or
// ReconcileLoadBalancerOnPods would, speculatively
// (runner.Speculate: no state lock, no state, no record, no plan kept),
// and the policy rules that would match the plan, for obj. It waits for a
// terraform slot only while ctx allows (runner.ErrBusy); a Service without
// a state yet is runner.ErrNoState. Its TLS Secrets are read as for a
// reconcile (a refused reference is an error).
func (e *Engine) PreviewLoadBalancer(ctx context.Context, in *annotations.Service, nodes []*corev1.Node, poolID string, pods map[lbmodel.ServicePort]string, obj policy.Object) (*runner.Speculation, []policy.Verdict, error) {
	svc := in.Service
	tls, err := e.tlsFor(ctx, svc)
	if err != nil {
		return nil, nil, fmt.Errorf("preview %s: %w", objectref.Service(svc).Describe(), err)
	}
	_, j, err := e.renderService(in, forward{nodes: nodes, poolID: poolID, pods: pods}, tls)
	if err != nil {
		return nil, nil, err
	}
	sp, verdicts, err := e.speculate(ctx, j, obj)
	if err != nil {
		return nil, nil, fmt.Errorf("preview %s: %w", objectref.Service(svc).Describe(), err)
	}
	return sp, verdicts, nil
}

// speculate plans j speculatively, with the policy rules that match the
// plan for obj (none without changes).
func (e *Engine) speculate(ctx context.Context, j runner.Job, obj policy.Object) (*runner.Speculation, []policy.Verdict, error) {
	sp, err := e.runner.Speculate(ctx, j)
	if err != nil {
		return nil, nil, err
	}
	if !sp.HasChanges {
		return sp, nil, nil
	}
	p := &runner.Plan{HasChanges: true, Summary: sp.Summary}
	verdicts, err := e.evaluate(p, kindChange, obj, func() (*tfjson.Plan, error) {
		if sp.JSON == nil {
			return nil, errors.New("no plan values")
		}
		return sp.JSON, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sp, verdicts, nil
}

// TargetPoolID is the id of the applied target pool of node selection
// selection, "" when there is none.
func (e *Engine) TargetPoolID(ctx context.Context, selection string) (string, error) {
	has, err := e.HasTargetPool(ctx, selection)
	if err != nil || !has {
		return "", err
	}
	_, j, err := e.RenderTargetPools(nil)
	if err != nil {
		return "", err
	}
	if _, err := e.load(ctx, objectref.TargetPools, j); err != nil {
		return "", err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if err != nil {
		return "", err
	}
	id, err := poolID(outs, selection)
	if err != nil {
		return "", nil // not applied yet
	}
	return id, nil
}

// EvaluateRendered is the policy rules' verdicts on a plan that would make
// changes (no plan: what the renderings say). A rule that reads values
// cannot be evaluated without a plan and holds the change (policy's
// failed-to-evaluate verdict).
func (e *Engine) EvaluateRendered(changes []runner.ResourceChange, obj policy.Object) []policy.Verdict {
	if len(changes) == 0 || e.rules.Len() == 0 {
		return nil
	}
	in := policy.Input{Object: obj, Plan: policy.Plan{Kind: kindChange}}
	for _, r := range changes {
		switch r.Action {
		case "create":
			in.Plan.Add++
		case "update":
			in.Plan.Change++
		case "replace":
			in.Plan.Add++
			in.Plan.Remove++
		}
		in.Plan.Resources = append(in.Plan.Resources, policy.Resource{Address: r.Address, Type: r.Type, Action: r.Action})
	}
	return e.rules.Evaluate(in)
}
