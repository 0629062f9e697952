package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// KindRoutes names the cluster's route-set state.
const (
	KindRoutes    = "routes"
	routeSetName  = "cluster"
	routeSetSpace = ""
)

// Route is one applied route as the cloud reports it.
type Route struct {
	Destination      string `json:"-"`
	ID               string `json:"id"`
	TargetInstanceID string `json:"target_instance_id"`
	// Status is active, or blackhole when the target instance is gone.
	Status string `json:"status"`
}

// RenderRoutes renders the cluster's route-set root module.
func (e *Engine) RenderRoutes(routes []renderer.Route) (*renderer.Module, runner.Job, error) {
	tg, cfg, err := e.target(KindRoutes, routeSetSpace, routeSetName)
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("routes: %w", err)
	}
	m, err := renderer.Routes(routes, cfg)
	if err != nil {
		return nil, runner.Job{}, err
	}
	return m, job(tg, m), nil
}

// EnsureRoutes makes the cluster's route table exactly routes, in one
// plan and apply.
func (e *Engine) EnsureRoutes(ctx context.Context, routes []renderer.Route) ([]Route, *runner.Result, error) {
	_, j, err := e.RenderRoutes(routes)
	if err != nil {
		return nil, nil, err
	}
	res, err := e.runner.Ensure(ctx, j, runner.EnsureOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("ensure routes: %w", err)
	}
	out, err := routesFrom(res.Outputs)
	return out, res, err
}

// Routes reads the applied routes from the recorded outputs or the state.
func (e *Engine) Routes(ctx context.Context) ([]Route, error) {
	_, j, err := e.RenderRoutes(nil)
	if err != nil {
		return nil, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if err != nil {
		return nil, fmt.Errorf("read routes: %w", err)
	}
	return routesFrom(outs)
}

func routesFrom(outs map[string]json.RawMessage) ([]Route, error) {
	raw, ok := outs["routes"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var byDest map[string]Route
	if err := json.Unmarshal(raw, &byDest); err != nil {
		return nil, fmt.Errorf("decode routes output: %w", err)
	}
	out := make([]Route, 0, len(byDest))
	for d, r := range byDest {
		r.Destination = d
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Route) int { return strings.Compare(a.Destination, b.Destination) })
	return out, nil
}

// RoutesWorkspace is the route set's workspace key (its state key).
func (e *Engine) RoutesWorkspace() (string, error) {
	tg, _, err := e.target(KindRoutes, routeSetSpace, routeSetName)
	if err != nil {
		return "", err
	}
	return tg.Key, nil
}

// RoutesKey names the route set among known objects and pending plans.
const RoutesKey = "routes"

// ReconcileRoutes converges the route set under an apply policy (see
// ReconcileLoadBalancer); approved comes from the route set's record.
func (e *Engine) ReconcileRoutes(ctx context.Context, routes []renderer.Route, policy annotations.ApplyPolicy, approved string) ([]Route, *Outcome, error) {
	_, j, err := e.RenderRoutes(routes)
	if err != nil {
		return nil, &Outcome{Policy: policy}, err
	}
	e.known.put(Known{Key: RoutesKey, Job: j, Policy: policy})
	var out *Outcome
	if policy == annotations.ApplyAuto {
		var res *runner.Result
		res, err = e.runner.Ensure(ctx, j, runner.EnsureOptions{PlanText: e.planText})
		out = autoOutcome(policy, res)
		out.Workspace, out.Files = j.Key, j.Files
	} else {
		out, err = e.gated(ctx, RoutesKey, j, false, policy, approved)
	}
	if err != nil || out.Result == nil {
		return nil, out, err
	}
	applied, err := routesFrom(out.Result.Outputs)
	return applied, out, err
}
