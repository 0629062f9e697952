package servicelb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	utilwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// targetPools converges the target pools, one object of their own with
// their record, review and events (on the record's ConfigMap), like the
// route set: the pool a Service's node selection asks for (pools.go),
// the delays their load balancers ask (asks.go), the nodes leaving them
// (nodes.go), created by the leader when sharded (leaderpools.go), and
// the pool of every node the Gateways forward to (gateways.go).
type targetPools struct {
	*shared
	engine poolEngine
	// keptSaid is what was last said of the idle pools a prune kept for
	// load balancers still using them (reportKeptPools).
	keptMu   sync.Mutex
	keptSaid string
}

// targetPool makes sure the target pool of svc's node selection exists
// and follows the nodes, and returns its id; "" when svc lists its nodes
// itself (pools disabled, a selection too long to name on a pool, or a
// new pool svc may not cause: newPoolRefused). The pools are one object
// of their own, with their record, review and events (on the record's
// ConfigMap), like the route set. pol is svc's apply policy.
func (l *targetPools) targetPool(ctx context.Context, in *annotations.Service, nodes []*v1.Node, pol annotations.ApplyPolicy) (string, error) {
	if l.cfg.LoadBalancer.TargetPools.Disabled {
		return "", nil
	}
	svc := in.Service
	sel, ok, err := engine.Selection(in)
	if err != nil || !ok {
		return "", err
	}
	has, err := l.engine.HasTargetPool(ctx, sel)
	if err != nil {
		return "", fmt.Errorf("target pools: %w", err)
	}
	if !l.shards.Owns(objectref.TargetPools) {
		return l.leadersPool(ctx, in, sel, has, pol)
	}
	subj, delays, err := l.poolsReview(ctx)
	if err != nil {
		return "", err
	}
	if !has {
		if why := newPoolRefused(svc.Namespace, sel, pol, len(l.poolsOf(ctx, svc.Namespace)), l.cfg.LoadBalancer.TargetPools.MaxPerNamespace); why != "" {
			klog.V(2).InfoS("no new target pool: the Service lists its nodes in its own plan", "service", klog.KObj(svc), "selection", sel, "reason", why)
			return "", nil
		}
		subj = l.board.CausedBy(ctx, subj, in)
	}
	id, err := l.reconcilePool(ctx, subj, sel, nodes, delays)
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait), errors.As(err, &denied):
		return "", api.NewRetryError(fmt.Sprintf("target pools: %v", err), approvalRetry)
	case err != nil:
		return "", fmt.Errorf("target pools: %w", err)
	}
	return id, nil
}

// reconcilePool makes sure the pool of selection sel exists and follows
// the nodes (those given before the informer's), under subj; its id.
func (l *targetPools) reconcilePool(ctx context.Context, subj review.Subject, sel string, nodes []*v1.Node, delays poolDelays) (string, error) {
	var id string
	err := l.run(ctx, subj, func(rv engine.Review) (out *engine.Outcome, err error) {
		id, out, err = l.engine.ReconcileTargetPools(ctx, sel, l.members(nodes, delays), rv)
		return out, err
	})
	return id, err
}

// run runs a change of the pools under their own review and apply policy
// (loadBalancer.targetPools.applyPolicy, whoever causes it), then records
// what it made true of the nodes leaving them (afterPools).
func (l *targetPools) run(ctx context.Context, subj review.Subject, change review.Change) error {
	out, err := l.board.Run(ctx, &subj, annotations.ApplyPolicy(l.cfg.LoadBalancer.TargetPools.ApplyPolicy), change)
	l.afterPools(ctx, subj, out, err)
	return err
}

// newPoolRefused says why a Service of ns under apply policy pol may not
// cause a pool for its node selection sel to be created, its namespace
// having own pools for selections of its own (at most max); "" when it
// may. The pool of every node is the cluster's, created under the pools'
// policy. Another selection is a tenant's choice, and its pool would be
// created outside the Service's own plan: only while the Service's policy
// applies unreviewed anyway, and within the namespace's bound. Refused,
// the Service lists its nodes in its own plan, under its own review.
func newPoolRefused(ns, sel string, pol annotations.ApplyPolicy, own, max int) string {
	switch {
	case sel == "":
		return ""
	case pol != annotations.ApplyAuto:
		return fmt.Sprintf("apply policy %s: a new pool would be created outside the Service's review", pol)
	case own >= max:
		return fmt.Sprintf("namespace %s has %d pools for node selections of its own (loadBalancer.targetPools.maxPerNamespace: %d)", ns, own, max)
	}
	return ""
}

// poolsOf are the node selections, other than every node, that Services
// of ns use and that have a pool.
func (l *targetPools) poolsOf(ctx context.Context, ns string) map[string]bool {
	out := map[string]bool{}
	for _, sel := range l.selections(ns) {
		if has, err := l.engine.HasTargetPool(ctx, sel); sel != "" && err == nil && has {
			out[sel] = true
		}
	}
	return out
}

// selections are the node selections of this controller's Services of
// ns ("": of every namespace), from the informer.
func (l *targetPools) selections(ns string) []string {
	if l.groups.services == nil {
		return nil
	}
	var out []string
	for _, obj := range l.groups.services.List() {
		svc, ok := obj.(*v1.Service)
		if !ok || !ours(svc) || (ns != "" && svc.Namespace != ns) {
			continue
		}
		if sel, ok, err := engine.Selection(annotations.Read(svc)); err == nil && ok {
			out = append(out, sel)
		}
	}
	return out
}

// prunePools destroys, every interval, the pools no Service selects any
// more (a tenant's earlier selections); with the Gateway API front-end
// on, the pool of every node is kept for its Gateways. A pool a load balancer still uses
// is kept, and said (reportKeptPools); the next round looks again.
func (l *targetPools) prunePools(ctx context.Context, every time.Duration) {
	utilwait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := l.prunePoolsOnce(ctx); err != nil {
			klog.ErrorS(err, "target pools: cannot destroy the pools no Service selects")
		}
	}, every)
}

func (l *targetPools) prunePoolsOnce(ctx context.Context) error {
	nodes := l.groups.lastNodes()
	if l.cfg.LoadBalancer.TargetPools.Disabled || l.groups.services == nil || len(nodes) == 0 {
		return nil // nothing seen yet: the pools would be planned without targets
	}
	subj, delays, err := l.poolsReview(ctx)
	if err != nil {
		return err
	}
	inUse := l.selections("")
	if l.cfg.GatewayAPI.Enabled {
		inUse = append(inUse, "") // the Gateways' backends forward to every node's
	}
	var pr engine.Prune
	err = l.run(ctx, subj, func(rv engine.Review) (out *engine.Outcome, err error) {
		pr, out, err = l.engine.PruneTargetPools(ctx, inUse, l.members(nodes, delays), rv)
		return out, err
	})
	if err == nil && len(pr.Destroyed) > 0 {
		klog.InfoS("target pools destroyed: no Service selects them", "selections", pr.Destroyed)
	}
	l.reportKeptPools(subj, pr.Kept)
	return err
}

// reportKeptPools says, once while it lasts, which idle pools a prune kept
// for the load balancers that still forward to them: one handed over to
// a team's Terraform keeps its pool (and the pool keeps following the
// nodes) until the team points it elsewhere.
func (l *targetPools) reportKeptPools(subj review.Subject, kept map[string][]string) {
	var parts []string
	for _, sel := range slices.Sorted(maps.Keys(kept)) {
		parts = append(parts, fmt.Sprintf("%s (used by %s)", selectionName(sel), strings.Join(kept[sel], ", ")))
	}
	said := strings.Join(parts, "; ")
	l.keptMu.Lock()
	defer l.keptMu.Unlock()
	if said == l.keptSaid {
		return
	}
	l.keptSaid = said
	if said == "" {
		return
	}
	klog.InfoS("target pools kept: no Service selects them, a load balancer still forwards to them", "pools", said)
	l.board.Eventf(subj, v1.EventTypeNormal, "TargetPoolKept",
		"Target pools no Service selects, kept while a load balancer still forwards to them (one handed over to "+
			"your Terraform, or one moving to another pool): %s. Once none does, the next prune destroys them", said)
}

// selectionName is a node selection for people: "every node's" for none.
func selectionName(sel string) string {
	if sel == "" {
		return "every node's"
	}
	return "selection " + sel
}
