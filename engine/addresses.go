package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Reserved addresses (docs/addresses.md): one workspace each, whose only
// input that moves is the load balancer holding it. A load balancer's
// replace or destroy never touches it; a move between two load balancers
// is one plan of this workspace, under the same review as any plan.

// AddressSpec is a reserved address as a front-end asks for it: its
// namespace, cloud name and the load balancer to hold it.
type AddressSpec = lbmodel.Address

// Address is what the cloud reports of a reserved address, from its root
// module's outputs.
type Address struct {
	ID string
	IP string
	// LoadBalancerID holds it, "" when detached; Holder says who that is
	// ("Service shop/blue").
	LoadBalancerID, Holder string
}

func addressFrom(outputs func(string) string) *Address {
	if outputs("id") == "" {
		return nil
	}
	return &Address{ID: outputs("id"), IP: outputs("ip"), LoadBalancerID: outputs("load_balancer_id"), Holder: outputs(renderer.HolderOutput)}
}

// RenderAddress renders the root module of reserved address a exactly as
// ReconcileAddress would apply it.
func (e *Engine) RenderAddress(a lbmodel.Address) (*renderer.Module, runner.Job, error) {
	ref := objectref.Address(a.Namespace, a.Name)
	// The owner namespace's fair share of terraform slots.
	return e.renderCluster(ref, a.Namespace, func(cfg renderer.Config) (*renderer.Module, error) {
		return renderer.AddressRoot(a, cfg)
	})
}

// ReconcileAddress converges the workspace of reserved address a under
// rv: reserved, and held by a.LoadBalancerID (none: detached, still
// reserved). Unchanged, it costs no terraform process. While its plan
// waits the error is an *AwaitingApprovalError, as for any object.
func (e *Engine) ReconcileAddress(ctx context.Context, a lbmodel.Address, rv Review) (*Address, *Outcome, error) {
	ref := objectref.Address(a.Namespace, a.Name)
	_, j, err := e.RenderAddress(a)
	if err != nil {
		return nil, &Outcome{Policy: rv.Policy}, err
	}
	out, err := e.converge(ctx, ref, j, rv, runOptions{state: e.stateObject(ref)}, nil)
	if err != nil || out.Result == nil {
		return nil, out, err
	}
	addr := addressFrom(out.Result.Output)
	if addr == nil {
		return nil, out, fmt.Errorf("%s: applied, but its outputs name no address", ref.Describe())
	}
	return addr, out, nil
}

// GetAddress reads reserved address namespace/name from the recorded
// outputs or the state, without a plan; exists is false when its
// workspace holds none.
func (e *Engine) GetAddress(ctx context.Context, namespace, name string) (addr *Address, exists bool, err error) {
	ref := objectref.Address(namespace, name)
	_, j, err := e.RenderAddress(lbmodel.Address{Namespace: namespace, Name: name})
	if err != nil {
		return nil, false, err
	}
	if _, err := e.load(ctx, ref, j); err != nil {
		return nil, false, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	switch {
	case errors.Is(err, runner.ErrGone):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read %s: %w", ref.Describe(), err)
	}
	addr = addressFrom((&runner.Result{Outputs: outs}).Output)
	return addr, addr != nil, nil
}

// ReleaseAddress destroys the workspace of reserved address
// namespace/name under rv: the IP goes back to the region. Only a person
// asks for it (AddressRelease, examplectl release), never a Service's deletion;
// an address a load balancer still holds is refused by the cloud.
func (e *Engine) ReleaseAddress(ctx context.Context, namespace, name string, rv Review) (*Outcome, error) {
	ref := objectref.Address(namespace, name)
	_, j, err := e.RenderAddress(lbmodel.Address{Namespace: namespace, Name: name})
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	return e.destroyObject(ctx, ref, j, rv)
}

// WithdrawRelease ends the wait of reserved address namespace/name's
// release (its request gone or refused): its destroy plan waiting, in
// memory or kept by an earlier process, is superseded as a newer plan
// would supersede it (Outcome.Superseded; nil when none waits). Nothing
// is planned or applied, and a change plan waiting (a move) is left.
func (e *Engine) WithdrawRelease(ctx context.Context, namespace, name string) (*Outcome, error) {
	ref := objectref.Address(namespace, name)
	_, j, err := e.RenderAddress(lbmodel.Address{Namespace: namespace, Name: name})
	if err != nil {
		return nil, err
	}
	out := &Outcome{Workspace: j.Key}
	release, err := e.turns.take(ctx, ref.Key())
	if err != nil {
		return out, fmt.Errorf("%s: waiting for the reconcile under way: %w", ref.Describe(), err)
	}
	defer release()
	kept, err := e.load(ctx, ref, j)
	if err != nil {
		return out, err
	}
	destroy := false
	e.objects.with(ref, func(o *object) {
		switch {
		case o.pending != nil:
			destroy = o.pending.plan.Destroy
		case o.waiting != nil:
			destroy = o.waiting.Destroy
		case kept != nil && kept.Pending != nil && kept.Pending.Plan.Destroy:
			// Waiting since an earlier process: by id and time only.
			stale := kept.Pending.Plan
			o.waiting, o.kept, destroy = &stale, nil, true
		}
	})
	if destroy {
		out.Superseded = e.settle(ref, nil)
	}
	return out, nil
}
