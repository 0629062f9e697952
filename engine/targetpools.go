package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Target pools: one workspace for the cluster holds a pool per node
// selection in use; load balancers reference their selection's pool. A
// node joining or leaving is then one apply of that workspace, whatever
// the number of load balancers.

// selections are the node selections that have a pool: those of the
// Services seen, and (read once) those of the pools already applied.
// A Service's reconcile never removes a pool (a load balancer may still
// use one, see docs/terraform-workflow.md): PruneTargetPools does, for
// the selections no Service has any more.
type selections struct {
	mu     sync.Mutex
	seeded bool
	// set holds each selection with the generation it was last used at:
	// a prune forgets only what nobody used since it looked.
	set map[string]uint64
	gen uint64
}

// RenderTargetPools renders the cluster's target pools root module.
func (e *Engine) RenderTargetPools(pools []renderer.Pool) (*renderer.Module, runner.Job, error) {
	tg, cfg, err := e.location(objectref.TargetPools)
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("target pools: %w", err)
	}
	m, err := renderer.TargetPools(pools, cfg)
	if err != nil {
		return nil, runner.Job{}, err
	}
	return m, job(tg, m, ""), nil
}

// ReconcileTargetPools makes sure the pool of selection exists with the
// nodes it picks, and every other pool follows nodes too, in one plan and
// apply under rv; it returns the selection's pool id. Unchanged nodes
// and selections cost no terraform process.
func (e *Engine) ReconcileTargetPools(ctx context.Context, selection string, nodes []*corev1.Node, rv Review) (string, *Outcome, error) {
	if err := e.seedSelections(ctx); err != nil {
		return "", &Outcome{Policy: rv.Policy}, err
	}
	sels := e.pools.add(selection)
	inputs := poolInputs(sels, nodes)
	if id, ok := e.poolFastPath(selection, inputs); ok {
		return id, &Outcome{Policy: rv.Policy, Result: &runner.Result{FastPath: true}, InputsDigest: inputs}, nil
	}
	out, err := e.applyPools(ctx, sels, nodes, rv)
	if err != nil || out.Result == nil {
		return "", out, err
	}
	id, err := poolID(out.Result.Outputs, selection)
	return id, out, err
}

// HasTargetPool tells whether selection has a pool: applied, or planned
// under the pools' review. A new one is the change of the Service that
// needs it.
func (e *Engine) HasTargetPool(ctx context.Context, selection string) (bool, error) {
	if err := e.seedSelections(ctx); err != nil {
		return false, err
	}
	e.pools.mu.Lock()
	defer e.pools.mu.Unlock()
	_, ok := e.pools.set[selection]
	return ok, nil
}

// PruneTargetPools destroys the pools of the selections not in inUse, in
// one plan and apply of the pools under rv, and returns them. A pool a
// load balancer still uses cannot be destroyed (the cloud refuses it): the
// apply fails, and a later prune tries again.
func (e *Engine) PruneTargetPools(ctx context.Context, inUse []string, nodes []*corev1.Node, rv Review) ([]string, *Outcome, error) {
	if err := e.seedSelections(ctx); err != nil {
		return nil, &Outcome{Policy: rv.Policy}, err
	}
	keep, idle, gen := e.pools.split(inUse)
	if len(idle) == 0 {
		return nil, nil, nil
	}
	out, err := e.applyPools(ctx, keep, nodes, rv)
	if err != nil || out.Result == nil {
		return nil, out, err
	}
	e.pools.forget(idle, gen)
	return idle, out, nil
}

// applyPools renders a pool per selection in sels and converges the
// pools' workspace to them.
func (e *Engine) applyPools(ctx context.Context, sels []string, nodes []*corev1.Node, rv Review) (*Outcome, error) {
	inputs := poolInputs(sels, nodes)
	var pools []renderer.Pool
	for _, s := range sels {
		targets, _, err := renderer.PoolTargets(nodes, s, e.render.Region)
		if err != nil {
			return &Outcome{Policy: rv.Policy}, err
		}
		pools = append(pools, renderer.Pool{Selection: s, Targets: targets})
	}
	_, j, err := e.RenderTargetPools(pools)
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	e.objects.with(objectref.TargetPools, func(o *object) {
		if o.job.Hash != j.Hash {
			o.converged = false
		}
		o.inputs, o.job, o.review = inputs, j, rv
	})
	out, err := e.reconcile(ctx, objectref.TargetPools, j, rv, runOptions{state: e.stateObject(objectref.TargetPools)})
	out.InputsDigest = inputs
	if err != nil || out.Result == nil {
		return out, err
	}
	e.objects.with(objectref.TargetPools, func(o *object) {
		if o.job.Hash == j.Hash {
			o.converged = true
		}
	})
	return out, nil
}

// poolFastPath answers from the last apply when the selections and nodes
// are those it was made from.
func (e *Engine) poolFastPath(selection, inputs string) (string, bool) {
	o, ok := e.objects.get(objectref.TargetPools)
	if !ok || o.inputs != inputs || !o.converged || o.pending != nil {
		return "", false
	}
	res, ok := e.runner.FastPath(o.job.Key, o.job.Hash, 0)
	if !ok {
		return "", false
	}
	id, err := poolID(res.Outputs, selection)
	return id, err == nil
}

// seedSelections learns, once, the selections of the pools already
// applied: a controller that starts keeps them (and their nodes) in step
// before it has seen every Service.
func (e *Engine) seedSelections(ctx context.Context) error {
	e.pools.mu.Lock()
	seeded := e.pools.seeded
	e.pools.mu.Unlock()
	if seeded {
		return nil
	}
	_, j, err := e.RenderTargetPools(nil)
	if err != nil {
		return err
	}
	if _, err := e.load(ctx, objectref.TargetPools, j); err != nil {
		return err
	}
	outs, err := e.runner.Outputs(ctx, j)
	if err != nil {
		return fmt.Errorf("read target pools: %w", err)
	}
	var applied map[string]string
	if raw, ok := outs["selectors"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &applied); err != nil {
			return fmt.Errorf("decode target pools' selectors: %w", err)
		}
	}
	e.pools.mu.Lock()
	defer e.pools.mu.Unlock()
	if e.pools.set == nil {
		e.pools.set = map[string]uint64{}
	}
	for _, s := range applied {
		if _, ok := e.pools.set[s]; !ok {
			e.pools.set[s] = e.pools.gen
		}
	}
	e.pools.seeded = true
	return nil
}

// add adds a selection, or marks it used again, and returns them all,
// sorted.
func (s *selections) add(sel string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[string]uint64{}
	}
	s.gen++
	s.set[sel] = s.gen
	return slices.Sorted(maps.Keys(s.set))
}

// split parts the selections into those in inUse and the idle rest, both
// sorted, at the generation it returns.
func (s *selections) split(inUse []string) (keep, idle []string, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(s.set)) {
		if slices.Contains(inUse, k) {
			keep = append(keep, k)
		} else {
			idle = append(idle, k)
		}
	}
	return keep, idle, s.gen
}

// forget drops the idle selections nobody used since generation gen.
func (s *selections) forget(idle []string, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range idle {
		if used, ok := s.set[k]; ok && used <= gen {
			delete(s.set, k)
		}
	}
}

// poolInputs digests the selections and the nodes (names, provider ids,
// labels) the pools are rendered from.
func poolInputs(sels []string, nodes []*corev1.Node) string {
	h := sha256.New()
	h.Write([]byte(strings.Join(sels, "\x00") + "\x01"))
	h.Write([]byte(ServiceInputs(&corev1.Service{}, nodes)))
	return hex.EncodeToString(h.Sum(nil))
}

// poolID is the id of selection's pool in the pools' outputs.
func poolID(outs map[string]json.RawMessage, selection string) (string, error) {
	var ids map[string]string
	if raw, ok := outs["ids"]; ok {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return "", fmt.Errorf("decode target pool ids: %w", err)
		}
	}
	id := ids[renderer.PoolKey(selection)]
	if id == "" {
		return "", fmt.Errorf("no target pool for node selection %q in the applied state", selection)
	}
	return id, nil
}
