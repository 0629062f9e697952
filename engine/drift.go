package engine

import (
	"context"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/runner"
)

// Known is an object the engine has converged, with what a drift check
// needs to plan it again.
type Known struct {
	// Key is "ns/name" for Services, "routes" for the route set.
	Key     string
	Service *corev1.Service // nil for the route set
	Job     runner.Job
	Policy  annotations.ApplyPolicy
}

type knownObjects struct {
	mu sync.Mutex
	m  map[string]Known
}

func (k *knownObjects) put(o Known) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]Known{}
	}
	k.m[o.Key] = o
}

func (k *knownObjects) forget(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, key)
}

// Known lists the objects a drift check covers, sorted by key.
func (e *Engine) Known() []Known {
	e.known.mu.Lock()
	defer e.known.mu.Unlock()
	out := make([]Known, 0, len(e.known.m))
	for _, o := range e.known.m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// CheckDrift plans the object again from the refreshed cloud. Changes mean
// drift: under auto the plan is applied at once; under manual it replaces
// any pending plan and waits for approval; under plan-only it is only
// reported. An Outcome with no Planned changes means no drift.
func (e *Engine) CheckDrift(ctx context.Context, o Known) (*Outcome, error) {
	out := &Outcome{Policy: o.Policy, Workspace: o.Job.Key, Files: o.Job.Files}
	p, err := e.runner.Plan(ctx, o.Job, runner.PlanOptions{})
	if err != nil {
		return out, err
	}
	if !p.HasChanges {
		e.runner.Discard(p)
		return out, nil
	}
	if _, err := e.runner.ShowPlan(ctx, p); err != nil {
		return out, err
	}
	out.Planned = p
	if o.Policy == annotations.ApplyAuto {
		res, err := e.runner.Apply(ctx, p)
		if err != nil {
			return out, err
		}
		out.Applied, out.Result = p, res
		return out, nil
	}
	if old := e.pending.get(o.Key); old != nil {
		e.runner.Discard(old)
		out.Superseded = old
	}
	e.pending.set(o.Key, p)
	out.Awaiting = p
	return out, nil
}
