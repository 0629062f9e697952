package exampleapi

import (
	"context"
	"net/http"
	"regexp"
	"time"
)

// Rule sets (docs/adr/0028): named groups of http and https rules attached
// to a load balancer, each written on its own, so that one route's rules
// change without a write of the load balancer and its other rules. A
// set's rules carry no priority but an order key: a listener serves a
// request by its numbered rules first (the load balancer's own, by
// priority), then by its keyed rules, the load balancer's own and every
// set's together, ordered by key byte by byte, equal keys by the set's
// name (the load balancer's own rules first) and then the rule's name.
// The cloud knows nothing of what a key means: a Gateway's controller
// derives it from the Gateway API's precedence.

// Limits of rule sets. A set's rules count towards the load balancer's
// MaxRules.
const (
	// MaxRuleSets is the most sets of one load balancer: a route each.
	MaxRuleSets = MaxRules
	// MaxOrderKeyLen is the longest order key.
	MaxOrderKeyLen = 512
)

// RuleNameRE is a rule's name, and a rule set's: 1-128 letters, digits
// and ._-/:@#*. It has no space, so "<set> <rule>" names a set's rule
// apart from every rule of the load balancer's own.
var RuleNameRE = regexp.MustCompile(`^[A-Za-z0-9._\-/:@#*]{1,128}$`)

// RuleSet is a load balancer's rule set as the cloud holds it.
type RuleSet struct {
	LoadBalancerID string `json:"load_balancer_id"`
	// Name identifies the set on its load balancer (RuleNameRE).
	Name string `json:"name"`
	// Rules are the set's rules: on http and https listeners of the load
	// balancer only, each with an OrderKey and no Priority, their names
	// unique in the set. Their backends' target pools are of the load
	// balancer's region; the cloud refuses to delete one a set uses, and
	// to remove a listener a set's rule routes.
	Rules     []Rule    `json:"rules"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Version   int64     `json:"version"`
}

// PutRuleSetRequest creates a rule set, or replaces its rules.
type PutRuleSetRequest struct {
	Rules []Rule `json:"rules"`
}

// ruleSetsPath is where load balancer lbID's rule sets are.
func ruleSetsPath(lbID string) string { return loadBalancers.item(lbID) + "/rule-sets" }

// PutRuleSet creates rule set name of load balancer lbID, or replaces its
// rules. ifMatch is the version the change is based on (0:
// unconditional; a set that does not exist has none to match).
func (c *Client) PutRuleSet(ctx context.Context, lbID, name string, in PutRuleSetRequest, ifMatch int64) (*RuleSet, error) {
	return call[RuleSet](ctx, c.t, request{op: "PutRuleSet", method: http.MethodPut,
		path: ruleSetsPath(lbID) + "/" + esc(name), ifMatch: ifMatch, in: in})
}

// GetRuleSet reads one rule set.
func (c *Client) GetRuleSet(ctx context.Context, lbID, name string) (*RuleSet, error) {
	return call[RuleSet](ctx, c.t, request{op: "GetRuleSet", method: http.MethodGet, path: ruleSetsPath(lbID) + "/" + esc(name)})
}

// ListRuleSets lists load balancer lbID's rule sets by name (all pages).
func (c *Client) ListRuleSets(ctx context.Context, lbID string) ([]RuleSet, error) {
	return listAll[RuleSet](ctx, c.t, "ListRuleSets", ruleSetsPath(lbID), nil)
}

// DeleteRuleSet removes a rule set: its rules stop routing at once.
func (c *Client) DeleteRuleSet(ctx context.Context, lbID, name string) error {
	return c.t.do(ctx, request{op: "DeleteRuleSet", method: http.MethodDelete, path: ruleSetsPath(lbID) + "/" + esc(name)})
}
