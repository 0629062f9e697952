package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Gateways: a Gateway API Gateway is one load balancer in a workspace of
// its own, its HTTPRoutes its rules (docs/gateway-api.md); the gateway
// package decides them, the engine renders, plans and applies them under
// review like a Service's.

// RenderGateway renders the Gateway's root module exactly as
// ReconcileGateway would apply it.
func (e *Engine) RenderGateway(g lbmodel.LoadBalancer) (*renderer.Module, runner.Job, error) {
	ref := g.Ref()
	tg, cfg, err := e.location(ref)
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("%s: %w", ref.Describe(), err)
	}
	m, err := renderer.RenderGateway(g, cfg)
	if err != nil {
		return nil, runner.Job{}, err
	}
	// Owned by the Gateway's uid, like a Service's workspace by its uid:
	// a Gateway created again under its name is a new owner. Its
	// operations take the fair share of the Gateway's namespace: many
	// namespaces' routes change one Gateway, and its one workspace holds
	// one slot at a time whatever they do.
	j := job(tg, m, g.UID)
	j.Share = g.Namespace
	return m, j, nil
}

// ReconcileGateway converges the Gateway's load balancer to g under rv
// (see Review); keys are the private keys of g.Certificates, by the same
// names, passed to terraform's environment and never rendered.
// Unchanged, it costs no terraform process.
func (e *Engine) ReconcileGateway(ctx context.Context, g lbmodel.LoadBalancer, keys map[string]string, rv Review) (*LoadBalancer, *Outcome, error) {
	ref := g.Ref()
	j, err := e.keyedGatewayJob(g, keys)
	if err != nil {
		return nil, &Outcome{Policy: rv.Policy}, err
	}
	out, err := e.converge(ctx, ref, j, rv, runOptions{}, nil)
	if err != nil && !isDecision(err) {
		err = fmt.Errorf("%s: %w", ref.Describe(), err)
	}
	if out.Result != nil {
		return loadBalancerFrom(out.Result), out, err
	}
	return nil, out, err
}

// RemoveGateway destroys the Gateway's load balancer under rv and deletes
// its state and workspace; removing what does not exist succeeds. The
// destroy is planned from g's rendering (a destroy needs the backend and
// the module call, not its values).
func (e *Engine) RemoveGateway(ctx context.Context, g lbmodel.LoadBalancer, rv Review) (*Outcome, error) {
	ref := g.Ref()
	j, err := e.gatewayJob(g)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, fmt.Errorf("delete %s: %w", ref.Describe(), err)
	}
	e.objects.with(ref, func(o *object) { o.converged, o.job, o.review = false, j, rv })
	out, err := e.reconcile(ctx, ref, j, rv, runOptions{destroy: true})
	if err == nil && out.Result != nil {
		e.objects.forget(ref)
	}
	if err != nil && !isDecision(err) {
		err = fmt.Errorf("delete %s: %w", ref.Describe(), err)
	}
	return out, err
}

// GetGatewayLoadBalancer reads the Gateway's load balancer from the
// recorded outputs or the state, without a plan; exists is false when
// there is none.
func (e *Engine) GetGatewayLoadBalancer(ctx context.Context, g lbmodel.LoadBalancer) (lb *LoadBalancer, exists bool, err error) {
	j, err := e.gatewayJob(g)
	if err != nil {
		return nil, false, err
	}
	if _, err := e.load(ctx, g.Ref(), j); err != nil {
		return nil, false, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if errors.Is(err, runner.ErrGone) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read load balancer of %s: %w", g.Ref().Describe(), err)
	}
	lb = loadBalancerFrom(&runner.Result{Outputs: outs})
	return lb, lb != nil, nil
}

// gatewayJob is a job for the Gateway's workspace: the last rendering in
// this process, else g's, else a shell of one http listener (enough for
// a destroy or an output read when the Gateway's listeners are gone).
func (e *Engine) gatewayJob(g lbmodel.LoadBalancer) (runner.Job, error) {
	if o, ok := e.objects.get(g.Ref()); ok && o.job.Key != "" {
		return o.job, nil
	}
	if _, j, err := e.RenderGateway(g); err == nil {
		return j, nil
	}
	shell := g
	shell.Listeners, shell.Rules = []lbmodel.Listener{{Protocol: "http", Port: 80}}, nil
	_, j, err := e.RenderGateway(shell)
	return j, err
}

// PreviewGateway plans g as ReconcileGateway would, speculatively (no
// state lock, no state, no record, no plan kept), and the policy rules
// that would match the plan, for obj; like PreviewLoadBalancer. The plan
// waits for a terraform slot in the fair share of editor, the namespace
// whose edit (a route's, the Gateway's) it previews: a namespace
// previewing in a loop spends its own turn, not the Gateway's.
func (e *Engine) PreviewGateway(ctx context.Context, g lbmodel.LoadBalancer, keys map[string]string, obj policy.Object, editor string) (*runner.Speculation, []policy.Verdict, error) {
	j, err := e.keyedGatewayJob(g, keys)
	if err != nil {
		return nil, nil, err
	}
	return e.speculateFor(ctx, g.Ref(), j, obj, editor)
}

// speculateFor is speculate of ref's job j in the fair share of editor,
// the namespace whose edit it previews.
func (e *Engine) speculateFor(ctx context.Context, ref objectref.Ref, j runner.Job, obj policy.Object, editor string) (*runner.Speculation, []policy.Verdict, error) {
	j.Share = editor
	sp, verdicts, err := e.speculate(ctx, j, obj)
	if err != nil {
		return nil, nil, fmt.Errorf("preview %s: %w", ref.Describe(), err)
	}
	return sp, verdicts, nil
}

// keyedGatewayJob is g's job with keys, the private keys of its
// certificates, in its terraform processes' environment.
func (e *Engine) keyedGatewayJob(g lbmodel.LoadBalancer, keys map[string]string) (runner.Job, error) {
	_, j, err := e.RenderGateway(g)
	if err != nil {
		return runner.Job{}, err
	}
	return j, addKeys(&j, &TLS{Keys: keys})
}
