package servicelb

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/deregistration"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// poolsKey is the one item of the node queue: every pool is one apply.
const poolsKey = "target-pools"

// nodeLifecycle takes leaving nodes out of the target pools, in waves, and
// brings returning ones back once settled (package deregistration). The
// service controller does not resync on a cordon or a taint, so it
// watches the nodes itself; every apply of the pools, whoever causes it,
// decides from all the nodes through members.
type nodeLifecycle struct {
	planner *deregistration.Planner
	cfg     *cloudconfig.Config
	// lister and recorder: nil until SetInformers and Initialize.
	lister   corelisters.NodeLister
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// said is the last event message of each node and pool, so a decision
	// that holds is not said again at every sync.
	said map[string]string
	// decided is each pool's last decision (by pool key), with its delay,
	// until an apply makes it true (afterPools).
	decided map[string]decision
	// draining are the nodes out of a pool whose delay has not ended, by
	// pool and node; reported is the leaving list last recorded.
	draining map[string]records.LeavingNode
	reported []records.LeavingNode
	// asks are what the applied load balancers ask of their pools.
	asks poolAsks
	// changes gathers the node changes of a moment into one apply.
	changes nodeChanges
}

// decision is a pool's decision and the delay its departures drain for.
type decision struct {
	deregistration.Decision
	delay time.Duration
}

func newNodeLifecycle(cfg *cloudconfig.Config) *nodeLifecycle {
	n := &nodeLifecycle{
		planner:  deregistration.New(cfg.LoadBalancer.TargetPools.Deregistration()),
		cfg:      cfg,
		queue:    workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		said:     map[string]string{},
		decided:  map[string]decision{},
		draining: map[string]records.LeavingNode{},
	}
	// A changed ask is applied to the pools like a node change.
	n.asks.changed = func() { n.queue.AddAfter(poolsKey, nodeBatch) }
	return n
}

// watch syncs the pools on every node change, batched: a change the
// pools decide from holds the batch until the nodes are quiet.
func (n *nodeLifecycle) watch(inf cache.SharedIndexInformer) error {
	n.lister = corelisters.NewNodeLister(inf.GetIndexer())
	changed := func(any) {
		n.changes.changed(time.Now())
		n.queue.AddAfter(poolsKey, nodeBatch)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*v1.Node)
			c, ok2 := cur.(*v1.Node)
			if ok1 && ok2 && !poolsChange(o, c) {
				n.queue.AddAfter(poolsKey, nodeBatch)
				return
			}
			changed(cur)
		},
		DeleteFunc: changed,
	})
	return err
}

// nodes are every node of the cluster, from the informer; before it,
// those the service controller passed (which lack the tainted ones).
func (n *nodeLifecycle) nodes(fallback []*v1.Node) []*v1.Node {
	if n.lister == nil {
		return fallback
	}
	nodes, err := n.lister.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "cannot list the nodes; the target pools follow the service controller's")
		return fallback
	}
	return nodes
}

// members decides every pool's targets from all the nodes, the targets
// the pools have, and the delays their applied load balancers ask for.
func (l *targetPools) members(fallback []*v1.Node, delays poolDelays) engine.PoolMembers {
	return func(sels []string, applied map[string][]string) ([]lbmodel.Pool, error) {
		nodes := l.lifecycle.nodes(fallback)
		round := l.lifecycle.planner.Observe(nodes)
		l.lifecycle.forgetGone(nodes)
		var pools []lbmodel.Pool
		for _, s := range sels {
			picked, _, err := engine.PoolNodes(nodes, s, l.cfg.Region)
			if err != nil {
				return nil, err
			}
			cands := make([]deregistration.Candidate, len(picked))
			var all []string
			for i, p := range picked {
				cands[i] = deregistration.Candidate{Node: p.Node, ID: p.ID}
				all = append(all, p.ID)
			}
			current, known := applied[s]
			if applied == nil {
				// A state from before the pools told their targets: a
				// leaving node may still be in, so the floor counts it.
				current, known = all, true
			}
			if !known {
				current = nil // a new pool
			}
			d := round.Pool(cands, current)
			delay, askedBy := delays.of(s)
			kept := l.cfg.LoadBalancer.TargetPools.DeregistrationDelay.Duration
			if delay != nil {
				kept = *delay
			}
			l.lifecycle.report(engine.PoolKey(s), d, kept)
			l.lifecycle.decide(engine.PoolKey(s), d, kept)
			if d.Recheck > 0 {
				l.lifecycle.queue.AddAfter(poolsKey, d.Recheck)
			}
			pools = append(pools, lbmodel.Pool{Selection: s, Targets: d.Targets, Delay: delay, AskedBy: askedBy})
		}
		return pools, nil
	}
}

// report tells each node of pool what the round decided for it, once per
// decision: leaving now, waiting for the floor, or settling before it
// returns.
func (n *nodeLifecycle) report(pool string, d deregistration.Decision, kept time.Duration) {
	if n.recorder == nil || n.lister == nil {
		return
	}
	for _, dep := range d.Removed {
		n.tell(dep.Node, pool, "LeavingTargetPool", "Leaves target pool %s (%s): no new connections; the open ones are kept for %s", pool, dep.Reason, kept)
	}
	for _, dep := range d.Waiting {
		n.tell(dep.Node, pool, "DeregistrationWaiting", "Stays in target pool %s for now (%s): %s", pool, dep.Reason, d.WaitMessage())
	}
	for _, name := range d.Returning {
		n.tell(name, pool, "ReturningToTargetPool", "Stopped leaving; returns to target pool %s once it has stayed so for %s",
			pool, n.cfg.LoadBalancer.TargetPools.SettleTime.Duration)
	}
}

// decide keeps pool's decision, whose departures drain for kept, until
// an apply makes it true.
func (n *nodeLifecycle) decide(pool string, d deregistration.Decision, kept time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.decided[pool] = decision{d, kept}
}

// afterPools records, once the pools' run under subj succeeded, the nodes
// leaving them: waiting for the floor, or draining until their delay ends
// (from this apply); the plan record shows them (examplectl status) and
// the audit log has a line per departure. Only what changed is written.
func (l *targetPools) afterPools(ctx context.Context, subj review.Subject, out *engine.Outcome, err error) {
	if err != nil || out == nil || out.Result == nil {
		return
	}
	n := l.lifecycle
	now := time.Now()
	n.mu.Lock()
	var waiting, departed []records.LeavingNode
	var empty []string
	for pool, d := range n.decided {
		if !out.Result.FastPath {
			for _, dep := range d.Removed {
				until := now.Add(d.delay)
				ln := records.LeavingNode{Node: dep.Node, Instance: dep.ID, Pool: pool, Reason: dep.Reason, State: records.LeavingDraining, Since: now, Until: &until}
				departed = append(departed, ln)
				if d.delay > 0 {
					n.draining[pool+"\x00"+dep.Node] = ln
				}
			}
		}
		for _, dep := range d.Waiting {
			waiting = append(waiting, records.LeavingNode{Node: dep.Node, Instance: dep.ID, Pool: pool, Reason: dep.Reason, State: records.LeavingWaiting, Since: now})
		}
		for key, ln := range n.draining {
			if back := ln.Pool == pool && slices.Contains(d.Targets, ln.Instance); back || !ln.Until.After(now) {
				delete(n.draining, key)
			}
		}
		// A pool newly empty is said once, until it has a target again.
		key := "\x00empty\x00" + pool
		if d.Empty() && n.said[key] == "" {
			empty = append(empty, fmt.Sprintf("%s (%d nodes picked, %d Ready)", pool, d.Picked, d.Base))
		}
		if d.Empty() {
			n.said[key] = "empty"
		} else {
			delete(n.said, key)
		}
	}
	// A pool gone (pruned) says nothing any more.
	for key := range n.said {
		if pool, ok := strings.CutPrefix(key, "\x00empty\x00"); ok {
			if _, decided := n.decided[pool]; !decided {
				delete(n.said, key)
			}
		}
	}
	n.decided = map[string]decision{}
	leaving := append(waiting, slices.Collect(maps.Values(n.draining))...)
	slices.SortFunc(leaving, func(a, b records.LeavingNode) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Node, b.Node))
	})
	same := slices.EqualFunc(leaving, n.reported, func(a, b records.LeavingNode) bool {
		return a.Node == b.Node && a.Pool == b.Pool && a.State == b.State && a.Reason == b.Reason
	})
	if !same {
		n.reported = leaving
	}
	n.mu.Unlock()
	for _, pool := range empty {
		// Loud: Services on this pool have no backend at all.
		klog.ErrorS(nil, "target pool left without targets: no node qualifies", "pool", pool)
		l.board.Eventf(subj, v1.EventTypeWarning, "TargetPoolEmpty", "Target pool %s has no target: no node qualifies (none is picked, or each one is leaving and not Ready, or returning)", pool)
	}
	if !same || len(departed) > 0 {
		l.board.ReportLeaving(ctx, subj, out.Workspace, leaving, departed)
	}
}

// forgetGone drops what was said of nodes no longer listed: a cluster
// that rotates its nodes keeps no memory of the old ones.
func (n *nodeLifecycle) forgetGone(nodes []*v1.Node) {
	listed := map[string]bool{}
	for _, node := range nodes {
		listed[node.Name] = true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for key := range n.said {
		if name, _, ok := strings.Cut(key, "\x00"); ok && name != "" && !listed[name] {
			delete(n.said, key)
		}
	}
}

// tell records an event on node about pool, unless it said the same last.
func (n *nodeLifecycle) tell(node, pool, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	n.mu.Lock()
	same := n.said[node+"\x00"+pool] == msg
	n.said[node+"\x00"+pool] = msg
	n.mu.Unlock()
	if same {
		return
	}
	obj, err := n.lister.Get(node)
	if err != nil {
		return // gone: nobody to tell
	}
	n.recorder.Event(obj, v1.EventTypeNormal, reason, msg)
}

// syncNodes applies the pools whenever the nodes change, until ctx ends.
func (l *targetPools) syncNodes(ctx context.Context) {
	work(ctx, l.lifecycle.queue, "target pools: cannot follow the nodes; retrying", func(ctx context.Context, _ string) error {
		if d := l.lifecycle.changes.gathering(time.Now()); d > 0 {
			l.lifecycle.queue.AddAfter(poolsKey, d)
			return nil
		}
		return l.syncPoolsOnce(ctx)
	})
}

// syncPoolsOnce gives the pools that exist the targets the node lifecycle
// decides: one apply when any changed.
func (l *targetPools) syncPoolsOnce(ctx context.Context) error {
	if l.cfg.LoadBalancer.TargetPools.Disabled || l.lifecycle.lister == nil || !l.shards.Owns(objectref.TargetPools) {
		return nil // sharded, the pools are the leader's
	}
	subj, delays, err := l.poolsReview(ctx)
	if err != nil {
		return err
	}
	return l.run(ctx, subj, func(rv engine.Review) (*engine.Outcome, error) {
		return l.engine.SyncTargetPools(ctx, l.members(nil, delays), rv)
	})
}
