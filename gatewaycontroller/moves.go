package gatewaycontroller

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// A Gateway's load balancer built before rule sets (docs/adr/0028) holds
// every route's rules. Dropped before the routes' sets hold them, the
// routes would answer 404 until then (a minute for 1,000). So a route
// whose rules the load balancer holds (its last apply's held_routes; all,
// without that output) keeps them there until its set is applied, and
// the next sync drops them: a move. Held twice under one order key, a
// rule is the load balancer's first (the cloud's order): the same answer.
// Held twice, rules count twice against the cloud's MaxRules: a set moves
// when its rules fit beside the others', the rest on later syncs.

// moveRetry is when a Gateway whose routes' rules are moving is looked
// at again: its load balancer drops the rules its sets now hold, or sets
// that did not fit beside them move.
const moveRetry = time.Second

// held is what a Gateway's load balancer holds of its routes' rules, as
// its last apply says.
type held struct {
	// all: its root had no held_routes output (rendered before rule sets).
	all    bool
	routes map[string]bool
}

// heldBy is what lb's last apply holds; nil is none (no load balancer).
func heldBy(lb *engine.LoadBalancer) held {
	if lb == nil {
		return held{}
	}
	return heldOf(lb.HeldRoutes, lb.AllRoutesHeld)
}

func heldOf(routes []string, all bool) held {
	h := held{all: all, routes: map[string]bool{}}
	for _, r := range routes {
		h.routes[r] = true
	}
	return h
}

// holds tells whether the load balancer holds s's route's rules.
func (h held) holds(s lbmodel.RuleSet) bool { return h.all || h.routes[s.RouteRef().Key()] }

// moves decides a sync's moves. kept are the sets whose rules the load
// balancer holds (h) and which were never applied (ever): their rules
// stay in it. moving are those of kept applied in this sync: in order, while
// their rules fit a second time in the cloud's MaxRules beside the load
// balancer's own rules (own) and every set's. When none fits, the first
// is let go: its rules leave the load balancer before its set holds them
// (its route answers 404 for one set's apply), and the rest move later.
func moves(h held, sets []lbmodel.RuleSet, ever func(objectref.Ref) bool, own int) (kept, moving map[objectref.Ref]bool) {
	kept, moving = map[objectref.Ref]bool{}, map[objectref.Ref]bool{}
	budget := exampleapi.MaxRules - own
	for _, s := range sets {
		budget -= len(s.Rules)
		if h.holds(s) && !ever(s.Ref()) {
			kept[s.Ref()] = true
		}
	}
	for _, s := range sets {
		if kept[s.Ref()] && len(s.Rules) <= budget {
			budget -= len(s.Rules)
			moving[s.Ref()] = true
		}
	}
	if len(kept) > 0 && len(moving) == 0 {
		for _, s := range sets {
			if kept[s.Ref()] {
				delete(kept, s.Ref())
				break
			}
		}
	}
	return kept, moving
}

// keep decides the moves of lb's sets (moves, h what lb holds) and adds
// to lb, whose own rules are left, the rules of the sets it keeps: what
// a sync applies and a preview plans alike.
func (m *ruleSetsOf) keep(lb *gateway.LoadBalancer, sets []lbmodel.RuleSet, h held) (kept, moving map[objectref.Ref]bool) {
	kept, moving = moves(h, sets, m.ever, len(lb.Rules))
	for _, s := range sets {
		if kept[s.Ref()] {
			lb.Rules = append(lb.Rules, s.Rules...)
		}
	}
	return kept, moving
}

// heldFor is what Gateway uid's load balancer holds, as this process or
// the plan records last saw it applied; ok is false when neither did.
func (m *ruleSetsOf) heldFor(uid types.UID) (h held, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok = m.held[uid]
	return h, ok
}

// hold keeps h as what Gateway uid's load balancer holds.
func (m *ruleSetsOf) hold(uid types.UID, h held) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held = map[types.UID]held{}
	}
	m.held[uid] = h
}

// unhold forgets what Gateway uid's load balancer held: it is gone.
func (m *ruleSetsOf) unhold(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.held, uid)
}

// movesPending makes p look again soon while rules are moving.
func (p *programmed) movesPending(probs *setProblems) {
	if probs.moved {
		p.retry = cmp.Or(min(p.retry, moveRetry), moveRetry)
	}
}

// heldRules is what gw's load balancer holds of its routes' rules: as
// last seen applied, else as its state says (none, for a Gateway never
// built).
func (c *Controller) heldRules(ctx context.Context, gw *gatewayv1.Gateway, lb gateway.LoadBalancer) (held, error) {
	if h, ok := c.ruleSets.heldFor(gw.UID); ok {
		return h, nil
	}
	prior, exists, err := c.cloud.Engine.GetGatewayLoadBalancer(ctx, lb)
	if err != nil {
		return held{}, fmt.Errorf("read which routes' rules the load balancer holds: %w", err)
	}
	if !exists {
		prior = nil
	}
	h := heldBy(prior)
	c.ruleSets.hold(gw.UID, h)
	return h, nil
}
