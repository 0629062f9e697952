package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
// Pools are never removed by a reconcile: a load balancer may still use
// one (see docs/terraform-workflow.md).
type selections struct {
	mu     sync.Mutex
	seeded bool
	set    map[string]bool
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
	var pools []renderer.Pool
	for _, s := range sels {
		targets, _, err := renderer.PoolTargets(nodes, s, e.render.Region)
		if err != nil {
			return "", &Outcome{Policy: rv.Policy}, err
		}
		pools = append(pools, renderer.Pool{Selection: s, Targets: targets})
	}
	_, j, err := e.RenderTargetPools(pools)
	if err != nil {
		return "", &Outcome{Policy: rv.Policy}, err
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
		return "", out, err
	}
	e.objects.with(objectref.TargetPools, func(o *object) {
		if o.job.Hash == j.Hash {
			o.converged = true
		}
	})
	id, err := poolID(out.Result.Outputs, selection)
	return id, out, err
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
		e.pools.set = map[string]bool{}
	}
	for _, s := range applied {
		e.pools.set[s] = true
	}
	e.pools.seeded = true
	return nil
}

// add adds a selection and returns them all, sorted.
func (s *selections) add(sel string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[string]bool{}
	}
	s.set[sel] = true
	out := make([]string, 0, len(s.set))
	for k := range s.set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
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
