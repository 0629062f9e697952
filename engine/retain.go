package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// RetainLoadBalancer hands the Service's load balancer over (deletion
// policy retain) under rv: one plan of its workspace removes the load
// balancer and its certificates from the state (removed blocks, destroy =
// false) while the cloud keeps them, serving; once it is applied, the
// emptied state and the workspace are deleted as after a destroy. The
// plan is decided like any other (the default rule load-balancer-forget
// holds it for a reviewer). Nothing recorded: nothing to hand over.
func (e *Engine) RetainLoadBalancer(ctx context.Context, in *annotations.Service, rv Review) (*Outcome, error) {
	svc := in.Service
	ref := objectref.Service(svc)
	tg, cfg, err := e.location(ref)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, fmt.Errorf("%s: %w", ref.Describe(), err)
	}
	m, err := renderer.Retained(svc, cfg)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	j := job(tg, m, string(svc.UID))
	j.Share = svc.Namespace
	if svc.DeletionTimestamp == nil {
		// It lives on (its type changed): it may have a load balancer
		// again, adopting this one back, with no tombstone in the way.
		j.Owner = ""
	}
	e.objects.with(ref, func(o *object) {
		o.converged, o.job, o.service, o.review, o.inputs = false, j, svc, rv, ""
		o.orphanChecked = true // what no state holds stays the cloud's either way
	})
	return e.handOver(ctx, ref, j, rv)
}

// RetainAddress hands reserved address namespace/name over with the load
// balancer holding it (its Service's deletion policy retain) under rv:
// one plan forgets it (a removed block), the cloud keeps it attached;
// once applied, its emptied state and workspace are deleted. The keeper
// leaves alone an address no workspace holds and no Service names.
func (e *Engine) RetainAddress(ctx context.Context, namespace, name string, rv Review) (*Outcome, error) {
	ref := objectref.Address(namespace, name)
	_, j, err := e.renderCluster(ref, namespace, func(cfg renderer.Config) (*renderer.Module, error) {
		return renderer.RetainedAddress(lbmodel.Address{Namespace: namespace, Name: name}, cfg)
	})
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	return e.handOver(ctx, ref, j, rv)
}

// handOver applies j, a root module of removed blocks, to ref's workspace
// under rv; once applied (or when there was nothing to forget), the
// emptied state and the workspace are deleted as after a destroy.
func (e *Engine) handOver(ctx context.Context, ref objectref.Ref, j runner.Job, rv Review) (*Outcome, error) {
	out, err := e.reconcile(ctx, ref, j, rv, runOptions{state: e.stateObject(ref)})
	if err != nil {
		var wait *AwaitingApprovalError
		var denied *DeniedError
		if !errors.As(err, &wait) && !errors.As(err, &denied) {
			err = fmt.Errorf("hand over %s: %w", ref.Describe(), err)
		}
		return out, err
	}
	if _, err := e.runner.Destroy(ctx, j, runner.EnsureOptions{}); err != nil {
		return out, fmt.Errorf("hand over %s: delete its emptied state: %w", ref.Describe(), err)
	}
	e.objects.forget(ref)
	return out, nil
}
