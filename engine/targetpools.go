package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/lbmodel"
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
	// reread is when a replica that does not own the pools last read
	// them again (sharding: the leader may have added one since).
	reread time.Time
	// set holds each selection with the generation it was last used at:
	// a prune forgets only what nobody used since it looked.
	set map[string]uint64
	gen uint64
	// applied are the targets of each selection's pool, as applied.
	applied map[string][]string
}

// len is how many selections have a pool.
func (s *selections) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.set)
}

// RenderTargetPools renders the cluster's target pools root module.
func (e *Engine) RenderTargetPools(pools []lbmodel.Pool) (*renderer.Module, runner.Job, error) {
	return e.renderCluster(objectref.TargetPools, "", func(cfg renderer.Config) (*renderer.Module, error) {
		return renderer.TargetPools(pools, cfg)
	})
}

// PoolMembers decides the pools of sels, every selection with a pool:
// each one's targets and deregistration delay, given the targets each
// forwards to now (applied, by selection; absent while unknown). The ccm's
// is its node lifecycle (package deregistration); NodesOf has none.
type PoolMembers func(sels []string, applied map[string][]string) ([]lbmodel.Pool, error)

// NodesOf is PoolMembers without a node lifecycle: each pool forwards to
// the nodes its selection picks, the exclude label honoured.
func (e *Engine) NodesOf(nodes []*corev1.Node) PoolMembers {
	return func(sels []string, _ map[string][]string) ([]lbmodel.Pool, error) {
		var pools []lbmodel.Pool
		for _, s := range sels {
			targets, _, err := renderer.PoolTargets(nodes, s, e.render.Region)
			if err != nil {
				return nil, err
			}
			pools = append(pools, lbmodel.Pool{Selection: s, Targets: targets})
		}
		return pools, nil
	}
}

// ReconcileTargetPools makes sure the pool of selection exists, and every
// pool has the targets members decides, in one plan and apply under rv;
// it returns the selection's pool id. Unchanged pools cost no terraform
// process.
func (e *Engine) ReconcileTargetPools(ctx context.Context, selection string, members PoolMembers, rv Review) (string, *Outcome, error) {
	if err := e.seedSelections(ctx); err != nil {
		return "", &Outcome{Policy: rv.Policy}, err
	}
	pools, err := members(e.pools.add(selection), e.pools.appliedTargets())
	if err != nil {
		return "", &Outcome{Policy: rv.Policy}, err
	}
	inputs := poolInputs(pools)
	if id, ok := e.poolFastPath(selection, inputs); ok {
		return id, &Outcome{Policy: rv.Policy, Result: &runner.Result{FastPath: true}, InputsDigest: inputs}, nil
	}
	out, err := e.applyPools(ctx, pools, rv)
	if err != nil || out.Result == nil {
		return "", out, err
	}
	id, err := poolID(out.Result.Outputs, selection)
	return id, out, err
}

// SyncTargetPools gives the pools that exist the targets members decides,
// in one plan and apply under rv when anything changed (a node leaving,
// returning or joining); none, and nil, before any pool is known.
func (e *Engine) SyncTargetPools(ctx context.Context, members PoolMembers, rv Review) (*Outcome, error) {
	if err := e.seedSelections(ctx); err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	sels := e.pools.all()
	if len(sels) == 0 {
		return nil, nil
	}
	pools, err := members(sels, e.pools.appliedTargets())
	if err != nil {
		return &Outcome{Policy: rv.Policy}, err
	}
	inputs := poolInputs(pools)
	if o, ok := e.objects.get(objectref.TargetPools); ok && o.inputs == inputs && o.converged && o.pending == nil {
		return nil, nil
	}
	return e.applyPools(ctx, pools, rv)
}

// HasTargetPool tells whether selection has a pool: applied, or planned
// under the pools' review. A new one is the change of the Service that
// needs it.
func (e *Engine) HasTargetPool(ctx context.Context, selection string) (bool, error) {
	if err := e.seedSelections(ctx); err != nil {
		return false, err
	}
	e.pools.mu.Lock()
	_, ok := e.pools.set[selection]
	e.pools.mu.Unlock()
	if ok || !e.rereadPools() {
		return ok, nil
	}
	if err := e.seedSelections(ctx); err != nil {
		return false, err
	}
	e.pools.mu.Lock()
	defer e.pools.mu.Unlock()
	_, ok = e.pools.set[selection]
	return ok, nil
}

// poolsReread bounds how often a replica that does not own the pools
// reads them again for a selection it does not know.
const poolsReread = time.Second

// rereadPools makes the next seedSelections read the pools from their
// record again, on a replica that does not own them (sharding: the leader
// applies them), at most every poolsReread; false when it does not.
func (e *Engine) rereadPools() bool {
	if e.owns == nil || e.owns(objectref.TargetPools) {
		return false
	}
	e.pools.mu.Lock()
	defer e.pools.mu.Unlock()
	if time.Since(e.pools.reread) < poolsReread {
		return false
	}
	e.pools.reread, e.pools.seeded = time.Now(), false
	e.objects.forget(objectref.TargetPools)
	return true
}

// PruneTargetPools destroys the pools of the selections not in inUse, in
// one plan and apply of the pools under rv (the others as members
// decides), and says which. A pool a load balancer still forwards to is
// kept, as Options.PoolUsers tells; without it the cloud refuses that
// destroy, the apply fails, and a later prune tries again.
func (e *Engine) PruneTargetPools(ctx context.Context, inUse []string, members PoolMembers, rv Review) (Prune, *Outcome, error) {
	if err := e.seedSelections(ctx); err != nil {
		return Prune{}, &Outcome{Policy: rv.Policy}, err
	}
	keep, idle, gen := e.pools.split(inUse)
	var pr Prune
	if len(idle) > 0 && e.poolUsers != nil {
		var err error
		if keep, idle, pr.Kept, err = e.keepUsedPools(ctx, keep, idle); err != nil {
			return pr, &Outcome{Policy: rv.Policy}, err
		}
	}
	if len(idle) == 0 {
		return pr, nil, nil
	}
	pools, err := members(keep, e.pools.appliedTargets())
	if err != nil {
		return pr, &Outcome{Policy: rv.Policy}, err
	}
	out, err := e.applyPools(ctx, pools, rv)
	if err != nil || out.Result == nil {
		return pr, out, err
	}
	e.pools.forget(idle, gen)
	pr.Destroyed = idle
	return pr, out, nil
}

// Prune is what a prune did: the selections whose pools it destroyed,
// and the idle ones it kept for the load balancers (ids, by selection)
// that still forward to their pools.
type Prune struct {
	Destroyed []string
	Kept      map[string][]string
}

// keepUsedPools moves from idle to keep the selections whose pools a load
// balancer still uses (Options.PoolUsers), and says for which ones.
func (e *Engine) keepUsedPools(ctx context.Context, keep, idle []string) ([]string, []string, map[string][]string, error) {
	tags := map[string]map[string]string{}
	for _, sel := range idle {
		tags[sel] = renderer.PoolTags(sel, e.render)
	}
	users, err := e.poolUsers(ctx, tags)
	if err != nil {
		return keep, idle, nil, fmt.Errorf("target pools: which load balancers use the idle pools: %w", err)
	}
	var still []string
	var kept map[string][]string
	for _, sel := range idle {
		lbs := users[sel]
		if len(lbs) == 0 {
			still = append(still, sel)
			continue
		}
		if kept == nil {
			kept = map[string][]string{}
		}
		kept[sel] = lbs
		keep = append(keep, sel)
	}
	slices.Sort(keep)
	return keep, still, kept, nil
}

// applyPools converges the pools' workspace to pools.
func (e *Engine) applyPools(ctx context.Context, pools []lbmodel.Pool, rv Review) (*Outcome, error) {
	inputs := poolInputs(pools)
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
	if err := e.pools.learn(out.Result.Outputs); err != nil {
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
	applied, err := selectorsOf(outs)
	if err != nil {
		return err
	}
	if err := e.pools.learn(outs); err != nil {
		return err
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

// selectorsOf is the pools' selectors output: selection by pool key.
func selectorsOf(outs map[string]json.RawMessage) (map[string]string, error) {
	var sels map[string]string
	if raw, ok := outs["selectors"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &sels); err != nil {
			return nil, fmt.Errorf("decode target pools' selectors: %w", err)
		}
	}
	return sels, nil
}

// learn keeps, from the pools' outputs after an apply (or as applied
// before this process), the targets each selection's pool forwards to. A
// state from before the targets output has none: unknown, not empty.
func (s *selections) learn(outs map[string]json.RawMessage) error {
	sels, err := selectorsOf(outs)
	if err != nil {
		return err
	}
	var targets map[string][]string
	if raw, ok := outs["targets"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &targets); err != nil {
			return fmt.Errorf("decode target pools' targets: %w", err)
		}
	}
	applied := map[string][]string{}
	for key, ts := range targets {
		if sel, ok := sels[key]; ok {
			applied[sel] = ts
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied = applied
	return nil
}

// appliedTargets are the targets of each selection's pool as applied.
func (s *selections) appliedTargets() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.applied)
}

// all are the selections with a pool, sorted.
func (s *selections) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.set))
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

// poolInputs digests the pools as decided: what they are rendered from.
func poolInputs(pools []lbmodel.Pool) string {
	h := sha256.New()
	for _, p := range pools {
		delay := "default"
		if p.Delay != nil {
			delay = p.Delay.String()
		}
		fmt.Fprintf(h, "%q %q %s\n", p.Selection, p.Targets, delay)
	}
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
