package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
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
func (e *Engine) RenderRoutes(routes []lbmodel.Route) (*renderer.Module, runner.Job, error) {
	return e.renderCluster(objectref.RouteSet, "", func(cfg renderer.Config) (*renderer.Module, error) {
		return renderer.Routes(routes, cfg)
	})
}

// Routes reads the applied routes from the recorded outputs or the state.
func (e *Engine) Routes(ctx context.Context) ([]Route, error) {
	_, j, err := e.RenderRoutes(nil)
	if err != nil {
		return nil, err
	}
	if _, err := e.load(ctx, objectref.RouteSet, j); err != nil { // a restart: the record's outputs
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

// RoutesWorkspace is the route set's workspace.
func (e *Engine) RoutesWorkspace() (string, error) {
	tg, _, err := e.location(objectref.RouteSet)
	if err != nil {
		return "", err
	}
	return tg.Key, nil
}

// ReconcileRoutes makes the cluster's route table exactly routes, in one
// plan and apply, under rv (see ReconcileLoadBalancer).
func (e *Engine) ReconcileRoutes(ctx context.Context, routes []lbmodel.Route, rv Review) ([]Route, *Outcome, error) {
	_, j, err := e.RenderRoutes(routes)
	if err != nil {
		return nil, &Outcome{Policy: rv.Policy}, err
	}
	out, err := e.converge(ctx, objectref.RouteSet, j, rv, runOptions{state: e.stateObject(objectref.RouteSet)}, nil)
	if err != nil || out.Result == nil {
		return nil, out, err
	}
	applied, err := routesFrom(out.Result.Outputs)
	return applied, out, err
}
