package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Pod pools (docs/adr/0024-pod-targets.md): the pod targets of one
// Service port, a target pool of type ip in a workspace of its own, so a
// rollout applies that workspace alone, never a load balancer or another
// Service's pool. Load balancers' rules forward to its id with port 0.

// RenderPodPool renders pod pool p's root module exactly as
// ReconcilePodPool would apply it.
func (e *Engine) RenderPodPool(p lbmodel.PodPool) (*renderer.Module, runner.Job, error) {
	// The Service's namespace's fair share of terraform slots.
	return e.renderCluster(p.Ref(), p.Namespace, func(cfg renderer.Config) (*renderer.Module, error) {
		return renderer.PodPoolRoot(p, cfg)
	})
}

// ReconcilePodPool converges pod pool p's workspace under rv (the pools'
// policy) and returns its pool id. Unchanged, it costs no terraform
// process.
func (e *Engine) ReconcilePodPool(ctx context.Context, p lbmodel.PodPool, rv Review) (string, *Outcome, error) {
	ref := p.Ref()
	_, j, err := e.RenderPodPool(p)
	if err != nil {
		return "", &Outcome{Policy: rv.Policy}, err
	}
	// A rollout changes a pool again and again: the plans applied under
	// the pools' policy are recorded without terraform's text (ADR 24).
	out, err := e.converge(ctx, ref, j, rv, runOptions{state: e.stateObject(ref), heldTextOnly: true}, nil)
	if err != nil || out.Result == nil {
		return "", out, err
	}
	id, err := podPoolID(out.Result.Outputs, ref)
	return id, out, err
}

// PodPoolID reads pod pool ref's id from its recorded outputs or its
// state, without a plan ("" when its workspace holds none): what a
// preview, which makes nothing, forwards to.
func (e *Engine) PodPoolID(ctx context.Context, ref objectref.Ref) (string, error) {
	p, err := podPoolOf(ref)
	if err != nil {
		return "", err
	}
	_, j, err := e.RenderPodPool(p)
	if err != nil {
		return "", err
	}
	if _, err := e.load(ctx, ref, j); err != nil {
		return "", err
	}
	outs, err := e.runner.Outputs(ctx, j)
	switch {
	case errors.Is(err, runner.ErrGone):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s: %w", ref.Describe(), err)
	}
	id, err := podPoolID(outs, ref)
	if err != nil {
		return "", nil // applied without its pool: none to forward to
	}
	return id, nil
}

// DestroyPodPool destroys the workspace of pod pool ref under rv: its
// Service port is targeted no more. The cloud refuses while a load
// balancer still forwards to it; a later call tries again.
func (e *Engine) DestroyPodPool(ctx context.Context, ref objectref.Ref, rv Review) (*Outcome, error) {
	p, err := podPoolOf(ref)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	_, j, err := e.RenderPodPool(p)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	return e.destroyObject(ctx, ref, j, rv)
}

// podPoolOf is an empty pod pool of ref, enough to render its workspace
// for a destroy: the pool's name and tags come from ref alone.
func podPoolOf(ref objectref.Ref) (lbmodel.PodPool, error) {
	if ref.Kind != objectref.KindPodPool {
		return lbmodel.PodPool{}, fmt.Errorf("%s is not a pod pool", ref)
	}
	svc, port, proto, ok := objectref.ParsePodPoolName(ref.Name)
	if !ok {
		return lbmodel.PodPool{}, fmt.Errorf("%s: not a pod pool's name (service-port-protocol)", ref)
	}
	return lbmodel.PodPool{ServicePort: lbmodel.ServicePort{Namespace: ref.Namespace, Service: svc, Port: port, Protocol: proto}}, nil
}

// podPoolID is pod pool ref's id in an apply's outputs.
func podPoolID(outs map[string]json.RawMessage, ref objectref.Ref) (string, error) {
	var ids map[string]string
	if raw, ok := outs["ids"]; ok {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return "", fmt.Errorf("decode %s's id: %w", ref.Describe(), err)
		}
	}
	id := ids[renderer.PodPoolKey(ref)]
	if id == "" {
		return "", fmt.Errorf("%s: no pool id in the applied state", ref.Describe())
	}
	return id, nil
}

// PodPoolWorkspace is the workspace of pod pool ref: where its record,
// and its events once its Service is gone, are kept.
func (e *Engine) PodPoolWorkspace(ref objectref.Ref) (string, error) {
	p, err := podPoolOf(ref)
	if err != nil {
		return "", err
	}
	_, j, err := e.RenderPodPool(p)
	return j.Key, err
}
