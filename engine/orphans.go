package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// recoverOrphan imports into j's state (object key) the load balancer an
// interrupted apply created and could not record, named name with the
// owner tags owner, when the state holds none: a destroy then destroys it
// rather than leaving it behind with a public address. It returns the id
// imported, "" when there was nothing to recover.
func (e *Engine) recoverOrphan(ctx context.Context, ref objectref.Ref, j runner.Job, name string, owner map[string]string) (string, error) {
	if e.findOrphan == nil {
		return "", nil
	}
	if _, err := e.load(ctx, ref, j); err != nil { // a restart: the record's outputs
		return "", err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if errors.Is(err, runner.ErrGone) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if (&runner.Result{Outputs: outs}).Output("id") != "" {
		return "", nil // the state holds it
	}
	id, err := e.findOrphan(ctx, name, owner)
	if err != nil || id == "" {
		return "", err
	}
	// No output names it, yet the state may hold it: an interrupted apply
	// keeps the load balancer it created (tainted) and writes no outputs.
	// Names are unique in a region, so the one found is the state's own.
	held, err := e.runner.Managed(ctx, j, renderer.LoadBalancerType)
	if err != nil {
		return "", fmt.Errorf("look for load balancer %s in the state: %w", id, err)
	}
	if slices.ContainsFunc(held, func(in runner.Instance) bool { return in.Address == renderer.LoadBalancerAddress }) {
		return "", nil
	}
	if err := e.runner.Import(ctx, j, renderer.LoadBalancerAddress, id); err != nil {
		return "", fmt.Errorf("import load balancer %s that an interrupted apply left: %w", id, err)
	}
	return id, nil
}

// groupOwner is the cloud name of g's load balancer (its primary's name
// annotation, else the group's derived name) and the tags that name the
// group as its owner.
func (e *Engine) groupOwner(g lbmodel.Group) (string, map[string]string) {
	name := renderer.GroupLoadBalancerName(e.render.ClusterID, g.Namespace, g.Name)
	if p := renderer.GroupPrimary(g, e.render); p != nil {
		if ann, err := annotations.Parse(p.Annotations); err == nil && ann.Name != "" {
			name = ann.Name
		}
	}
	return name, renderer.GroupOwnerTags(g.Namespace, g.Name, e.render.ClusterID)
}
