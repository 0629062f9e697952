package engine

import (
	"context"
	"fmt"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Rule sets (docs/adr/0028): one route's rules on a Gateway's load
// balancer, a rule set of the cloud in a workspace of its own, so a
// route's change plans and applies its rules alone, whatever the load
// balancer holds. Its plans are the Gateway's: its review and policy.

// RenderRuleSet renders rule set s's root module exactly as
// ReconcileRuleSet would apply it.
func (e *Engine) RenderRuleSet(s lbmodel.RuleSet) (*renderer.Module, runner.Job, error) {
	// The route's namespace's fair share of terraform slots: a team
	// changing its routes in a loop spends its own turns, not the
	// Gateway's other teams'.
	return e.renderCluster(s.Ref(), s.RouteNamespace, func(cfg renderer.Config) (*renderer.Module, error) {
		return renderer.RuleSetRoot(s, cfg)
	})
}

// ReconcileRuleSet converges rule set s's workspace under rv (its
// Gateway's review). Unchanged, it costs no terraform process.
func (e *Engine) ReconcileRuleSet(ctx context.Context, s lbmodel.RuleSet, rv Review) (*Outcome, error) {
	ref := s.Ref()
	_, j, err := e.RenderRuleSet(s)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	out, err := e.converge(ctx, ref, j, rv, runOptions{state: e.stateObject(ref)}, nil)
	if err != nil && !isDecision(err) {
		err = fmt.Errorf("%s: %w", ref.Describe(), err)
	}
	return out, err
}

// DestroyRuleSet destroys the workspace of rule set ref under rv: its
// route's rules leave the load balancer, which must go after them (the
// cloud refuses to delete a load balancer with rule sets).
func (e *Engine) DestroyRuleSet(ctx context.Context, ref objectref.Ref, rv Review) (*Outcome, error) {
	j, err := e.ruleSetJob(ref)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	out, err := e.destroyObject(ctx, ref, j, rv)
	if err != nil && !isDecision(err) {
		err = fmt.Errorf("delete %s: %w", ref.Describe(), err)
	}
	return out, err
}

// RuleSetWorkspace is the workspace of rule set ref: where its record is
// kept.
func (e *Engine) RuleSetWorkspace(ref objectref.Ref) (string, error) {
	j, err := e.ruleSetJob(ref)
	return j.Key, err
}

// ruleSetJob is a job for rule set ref's workspace: the last rendering
// in this process, else an empty set of ref, enough for a destroy (which
// plans from the state, not from the rules) or a workspace's name.
func (e *Engine) ruleSetJob(ref objectref.Ref) (runner.Job, error) {
	if o, ok := e.objects.get(ref); ok && o.job.Key != "" {
		return o.job, nil
	}
	s, err := ruleSetOf(ref)
	if err != nil {
		return runner.Job{}, err
	}
	_, j, err := e.RenderRuleSet(s)
	return j, err
}

// ruleSetOf is an empty rule set of ref on a load balancer it does not
// know: what a destroy renders.
func ruleSetOf(ref objectref.Ref) (lbmodel.RuleSet, error) {
	if ref.Kind != objectref.KindRuleSet {
		return lbmodel.RuleSet{}, fmt.Errorf("%s is not a rule set", ref)
	}
	gw, kind, ns, route, ok := objectref.ParseRuleSetName(ref.Name)
	if !ok {
		return lbmodel.RuleSet{}, fmt.Errorf("%s: not a rule set's name (gateway:kind:namespace:route)", ref)
	}
	return lbmodel.RuleSet{GatewayNamespace: ref.Namespace, Gateway: gw, RouteKind: kind, RouteNamespace: ns, Route: route,
		LoadBalancerID: unknownLoadBalancer}, nil
}

// unknownLoadBalancer stands for the load balancer of a rule set rendered
// for its destroy: the plan destroys what the state holds, whatever the
// configuration names.
const unknownLoadBalancer = "lb-unknown"

// PreviewRuleSet plans rule set s as ReconcileRuleSet would,
// speculatively, and the policy rules that would match the plan, for
// obj; like PreviewGateway, its plan waits in the fair share of editor.
// A set not yet applied has no state: ErrNoState.
func (e *Engine) PreviewRuleSet(ctx context.Context, s lbmodel.RuleSet, obj PolicyObject, editor string) (*Speculation, []Verdict, error) {
	_, j, err := e.RenderRuleSet(s)
	if err != nil {
		return nil, nil, err
	}
	return e.speculateFor(ctx, s.Ref(), j, obj, editor)
}
