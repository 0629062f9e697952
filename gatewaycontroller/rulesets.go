package gatewaycontroller

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// Each route's rules on a Gateway's load balancer are a rule set in a
// workspace of its own (docs/adr/0028): a route's change is a plan of its
// set alone. The translation stays whole; program splits what it decided
// (splitRuleSets) and applies the sets after the load balancer: a fence
// or catch-all that keeps one namespace's requests from another's routes
// (ADR 21) is in the load balancer's workspace, and must be in place
// before a new route's rules take requests. A set applied from the same
// rules as its last apply is skipped before it is rendered. A set's rule
// waits in the cloud for the listener of its port, so a new listener
// needs no other order.

// ruleSetConcurrency bounds the sets of one Gateway reconciled at once:
// the runner's slots bound their terraform processes.
const ruleSetConcurrency = 16

// splitRuleSets moves lb's rules of routes into one rule set per route,
// in the order of the routes' keys, and leaves lb its own.
func splitRuleSets(lb *gateway.LoadBalancer) []lbmodel.RuleSet {
	by := map[lbmodel.RouteRef]*lbmodel.RuleSet{}
	own := lb.Rules[:0:0]
	for _, r := range lb.Rules {
		if r.Route == nil {
			own = append(own, r)
			continue
		}
		s := by[*r.Route]
		if s == nil {
			s = &lbmodel.RuleSet{GatewayNamespace: lb.Namespace, Gateway: lb.Name, RouteKind: r.Route.Kind,
				RouteNamespace: r.Route.Namespace, Route: r.Route.Name}
			by[*r.Route] = s
		}
		s.Rules = append(s.Rules, r)
	}
	lb.Rules = own
	out := make([]lbmodel.RuleSet, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b lbmodel.RuleSet) int { return cmp.Compare(a.Ref().Key(), b.Ref().Key()) })
	return out
}

// ruleSetsOf are the rule sets each Gateway has a workspace for, by the
// Gateway's namespace/name: those this process applied, and those the plan
// records name (read at start); and what each was last applied from
// (fingerprint), so that a sync of a Gateway of 1,000 routes renders and
// reviews only the sets that changed. The workers of different Gateways
// and the previews share it, under mu.
type ruleSetsOf struct {
	mu      sync.Mutex
	m       map[types.NamespacedName]map[objectref.Ref]bool
	applied map[objectref.Ref]string
	// recorded are the sets whose records say they were applied (read
	// at start); held is what each Gateway's load balancer holds of its
	// routes' rules, by the Gateway's uid (moves.go).
	recorded map[objectref.Ref]bool
	held     map[types.UID]held
}

// fingerprint is what rule set s is rendered from, as one string.
func fingerprint(s lbmodel.RuleSet) string {
	raw, err := json.Marshal(s)
	if err != nil {
		return "" // never equal to a fingerprint: reconciled every time
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// current tells whether ref was last applied from fingerprint fp.
func (m *ruleSetsOf) current(ref objectref.Ref, fp string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fp != "" && m.applied[ref] == fp
}

// settle keeps fp as what ref was last applied from ("": not applied).
func (m *ruleSetsOf) settle(ref objectref.Ref, fp string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil {
		m.applied = map[objectref.Ref]string{}
	}
	if fp == "" {
		delete(m.applied, ref)
		return
	}
	m.applied[ref] = fp
}

func (m *ruleSetsOf) add(nn types.NamespacedName, ref objectref.Ref) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[types.NamespacedName]map[objectref.Ref]bool{}
	}
	if m.m[nn] == nil {
		m.m[nn] = map[objectref.Ref]bool{}
	}
	m.m[nn][ref] = true
}

// of are nn's rule sets, in the order of their keys.
func (m *ruleSetsOf) of(nn types.NamespacedName) []objectref.Ref {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.SortedFunc(maps.Keys(m.m[nn]), func(a, b objectref.Ref) int { return cmp.Compare(a.Key(), b.Key()) })
}

// ever tells whether ref was applied: by this process, or as its record
// said at start.
func (m *ruleSetsOf) ever(ref objectref.Ref) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applied[ref] != "" || m.recorded[ref]
}

func (m *ruleSetsOf) drop(nn types.NamespacedName, ref objectref.Ref) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m[nn], ref)
	delete(m.applied, ref)
	delete(m.recorded, ref)
}

// learn adds the rule set a plan record names, and whether it was
// applied; of a Gateway's record, what its load balancer holds of its
// routes' rules.
func (m *ruleSetsOf) learn(r *records.Record) {
	switch r.Object.Kind {
	case objectref.KindGateway:
		if r.Applied != nil && r.Object.UID != "" {
			m.hold(types.UID(r.Object.UID), heldOf(engine.HeldRoutes(r.Applied.Outputs)))
		}
	case objectref.KindRuleSet:
		gw, _, _, _, ok := objectref.ParseRuleSetName(r.Object.Name)
		if !ok {
			return
		}
		m.add(types.NamespacedName{Namespace: r.Object.Namespace, Name: gw}, r.Object)
		if r.Applied != nil {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.recorded == nil {
				m.recorded = map[objectref.Ref]bool{}
			}
			m.recorded[r.Object] = true
		}
	}
}

// setProblems are what the rule sets of one sync came to that is not
// applied: by route, why.
type setProblems struct {
	mu  sync.Mutex
	why []string
	// waiting: one waits for a decision (an approval), so the Gateway is
	// looked at again.
	waiting bool
	// moved: a moving set was applied, so the load balancer may drop its
	// rules, and sets that did not fit beside them move (moves.go).
	moved bool
	// told is what each route with a set is told (rulestatus.go).
	told map[gateway.RouteKey]ruleState
}

func (p *setProblems) tell(s lbmodel.RuleSet, st ruleState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.told == nil {
		p.told = map[gateway.RouteKey]ruleState{}
	}
	p.told[routeKeyOf(s)] = st
}

// routeKeyOf is the key of s's route among a translation's parents.
func routeKeyOf(s lbmodel.RuleSet) gateway.RouteKey {
	return gateway.RouteKey{Kind: gatewayv1.Kind(s.RouteKind), NamespacedName: types.NamespacedName{Namespace: s.RouteNamespace, Name: s.Route}}
}

func (p *setProblems) add(what string, err error, waiting bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.why = append(p.why, what+": "+err.Error())
	p.waiting = p.waiting || waiting
}

func (p *setProblems) moveDone() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.moved = true
}

// syncRuleSets converges gw's rule sets to sets on load balancer lbID
// under pol, each under its own review, and destroys those of routes no
// longer in sets. Of the sets whose rules the load balancer keeps
// (kept, moves.go), those not moving now wait; those held (a pod pool of
// theirs not applied yet, resolvePools) wait as last applied, told why.
// What is not applied is in the returned problems; only a cancelled
// context stops it early.
func (c *Controller) syncRuleSets(ctx context.Context, gw *gatewayv1.Gateway, in review.GatewayInputs, pol annotations.ApplyPolicy,
	lbID string, sets []lbmodel.RuleSet, kept, moving map[objectref.Ref]bool, held map[objectref.Ref]ruleState) *setProblems {
	nn := nameOf(gw)
	probs := &setProblems{}
	wanted := map[objectref.Ref]bool{}
	// What each set reconciled now was applied from ("": not applied),
	// kept once all are done: the goroutines write their own elements.
	ran, fps := make([]bool, len(sets)), make([]string, len(sets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, ruleSetConcurrency)
	for i, s := range sets {
		s.LoadBalancerID = lbID
		ref := s.Ref()
		wanted[ref] = true // a held set is kept as applied, not destroyed
		if st, ok := held[ref]; ok {
			probs.tell(s, st)
			probs.add(fmt.Sprintf("the rules of %s %s/%s", s.RouteKind, s.RouteNamespace, s.Route), errors.New("a pod pool of theirs is not applied yet"), true)
			continue
		}
		c.ruleSets.add(nn, ref) // before its first plan: a failed create leaves a workspace
		fp := fingerprint(s)
		switch {
		case c.ruleSets.current(ref, fp):
			probs.tell(s, rulesApplied)
			continue // applied from just this: nothing to render or review
		case kept[ref] && !moving[ref]:
			probs.tell(s, rulesHeld)
			continue // its move waits
		}
		ran[i] = true
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			subj := c.cloud.Review.RuleSetSubject(gw, in, ref, records.KindChange)
			_, err := c.cloud.Review.Run(ctx, &subj, pol, func(rv engine.Review) (*engine.Outcome, error) {
				return c.cloud.Engine.ReconcileRuleSet(ctx, s, rv)
			})
			probs.tell(s, ruleStateOf(err))
			if err != nil {
				probs.add(fmt.Sprintf("the rules of %s %s/%s", s.RouteKind, s.RouteNamespace, s.Route), err, isWaiting(err))
				fp = ""
			} else if kept[ref] {
				probs.moveDone()
			}
			fps[i] = fp
		})
	}
	wg.Wait()
	for i, s := range sets {
		if ran[i] {
			c.ruleSets.settle(s.Ref(), fps[i])
		}
	}
	for _, ref := range c.ruleSets.of(nn) {
		if wanted[ref] {
			continue
		}
		switch gone, err := c.destroyRuleSet(ctx, gw, pol, ref); {
		case err != nil:
			probs.add(ref.Describe(), err, false)
		case !gone:
			probs.add(ref.Describe(), errors.New("its destroy waits for a decision"), true)
		}
	}
	return probs
}

// destroyRuleSets destroys every rule set of gw's load balancer, which
// goes only after them; it tells whether they are all gone.
func (c *Controller) destroyRuleSets(ctx context.Context, gw *gatewayv1.Gateway, pol annotations.ApplyPolicy) (bool, error) {
	all := true
	for _, ref := range c.ruleSets.of(nameOf(gw)) {
		gone, err := c.destroyRuleSet(ctx, gw, pol, ref)
		if err != nil {
			return false, err
		}
		all = all && gone
	}
	return all, nil
}

// destroyRuleSet destroys rule set ref under review and tells whether it
// is gone (false while its destroy waits for a decision).
func (c *Controller) destroyRuleSet(ctx context.Context, gw *gatewayv1.Gateway, pol annotations.ApplyPolicy, ref objectref.Ref) (bool, error) {
	subj := c.cloud.Review.RuleSetSubject(gw, review.GatewayInputs{}, ref, records.KindDestroy)
	out, err := c.cloud.Review.Run(ctx, &subj, pol, func(rv engine.Review) (*engine.Outcome, error) {
		return c.cloud.Engine.DestroyRuleSet(ctx, ref, rv)
	})
	switch {
	case isWaiting(err):
		return false, nil
	case errors.Is(err, engine.ErrGone):
	case err != nil:
		return false, err
	default:
		c.cloud.Review.Removed(ctx, out)
	}
	c.ruleSets.drop(nameOf(gw), ref)
	klog.V(2).InfoS("Destroyed a route's rule set", "gateway", klog.KObj(gw), "ruleSet", ref.Name)
	return true, nil
}

// isWaiting tells whether err is a plan waiting for a decision (an
// approval), or denied: a person acts, not a retry.
func isWaiting(err error) bool {
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	return errors.As(err, &wait) || errors.As(err, &denied)
}

// setsPending makes p look again when a rule set is not applied: soon
// for a decision awaited, later for a failure (its event says why).
func (p *programmed) setsPending(probs *setProblems) {
	switch {
	case len(probs.why) == 0:
	case probs.waiting:
		p.retry = cmp.Or(min(p.retry, approvalRetry), approvalRetry)
	default:
		p.retry = cmp.Or(p.retry, provisioningRetry)
	}
	if len(probs.why) > 0 {
		klog.InfoS("Gateway's route rule sets not all applied", "rules", probs.why)
	}
}
