package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// Rule sets (exampleapi/rulesets.go) are stored in one bucket keyed by
// "<load balancer id>\x00<name>", so a load balancer's sets are one
// cursor range, listed in name order. A set is written whole (PUT). A
// set's rule routes the http or https listener of its port when the load
// balancer has one, and nothing until then: a set and its load balancer's
// listeners change in either order, so a controller moving a route's
// rules to a new listener needs no sequence of writes. The load balancer
// stays while it has sets, and all its rules together stay within
// exampleapi.MaxRules.

const kindRuleSet = "rule set"

// ruleSetKey is the store key of set name of load balancer lbID.
func ruleSetKey(lbID, name string) string { return lbID + "\x00" + name }

// ruleSetsOf reads load balancer lbID's rule sets, by name.
func ruleSetsOf(tx *bolt.Tx, lbID string) ([]exampleapi.RuleSet, error) {
	var out []exampleapi.RuleSet
	prefix := []byte(ruleSetKey(lbID, ""))
	c := tx.Bucket(bucketRuleSets).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var rs exampleapi.RuleSet
		if err := json.Unmarshal(v, &rs); err != nil {
			return nil, fmt.Errorf("decoding rule set %q: %w", k, err)
		}
		out = append(out, rs)
	}
	return out, nil
}

// allRules are lb's own rules, then its sets' in name order: every
// backend it forwards to.
func allRules(tx *bolt.Tx, lb exampleapi.LoadBalancer) ([]exampleapi.Rule, error) {
	sets, err := ruleSetsOf(tx, lb.ID)
	return (&dataplane.LoadBalancer{LoadBalancer: lb, RuleSets: sets}).AllRules(), err
}

// getRuleSet reads set name of load balancer lbID; a missing load
// balancer or set is not found.
func getRuleSet(tx *bolt.Tx, lbID, name string) (exampleapi.RuleSet, error) {
	if _, err := storedLBs.get(tx, lbID); err != nil {
		return exampleapi.RuleSet{}, err
	}
	var rs exampleapi.RuleSet
	ok, err := getJSON(tx.Bucket(bucketRuleSets), ruleSetKey(lbID, name), &rs)
	if err == nil && !ok {
		err = notFound(kindRuleSet, name)
	}
	return rs, err
}

func (c *cloud) getRuleSet(lbID, name string) (exampleapi.RuleSet, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.RuleSet, error) { return getRuleSet(tx, lbID, name) })
}

func (c *cloud) listRuleSets(lbID string, pg page) (resp exampleapi.ListResponse[exampleapi.RuleSet], err error) {
	err = c.view(func(tx *bolt.Tx) error {
		if _, err := storedLBs.get(tx, lbID); err != nil {
			return err
		}
		prefix := ruleSetKey(lbID, "")
		resp, err = listBucket(tx.Bucket(bucketRuleSets), pg, func(k, v []byte) (exampleapi.RuleSet, bool, error) {
			var rs exampleapi.RuleSet
			if !strings.HasPrefix(string(k), prefix) {
				return rs, false, nil
			}
			err := json.Unmarshal(v, &rs)
			return rs, err == nil, err
		})
		return err
	})
	return resp, err
}

// putRuleSet creates set name of load balancer lbID, or replaces its
// rules, under If-Match (a set that does not exist yet matches only an
// unconditional write); req must have passed validateRuleSet.
// created tells which.
func (c *cloud) putRuleSet(lbID, name, ifMatch string, req exampleapi.PutRuleSetRequest) (rs exampleapi.RuleSet, created bool, err error) {
	err = c.update(func(tx *bolt.Tx) error {
		rec, err := storedLBs.get(tx, lbID)
		if err != nil {
			return err
		}
		sets, err := ruleSetsOf(tx, lbID)
		if err != nil {
			return err
		}
		i := indexOfSet(sets, name)
		if created = i < 0; created {
			if len(sets) >= exampleapi.MaxRuleSets {
				return conflict("load balancer %s has %d rule sets (at most %d)", lbID, len(sets), exampleapi.MaxRuleSets)
			}
			rs = exampleapi.RuleSet{LoadBalancerID: lbID, Name: name, CreatedAt: c.now()}
			if ifMatch != "" { // nothing to match: If-Match asks for a set that exists
				return notFound(kindRuleSet, name)
			}
			sets = append(sets, rs)
			i = len(sets) - 1
		} else {
			rs = sets[i]
			if err := checkIfMatch(ifMatch, rs.Version); err != nil {
				return err
			}
		}
		sets[i].Rules = req.Rules
		if err := requireRuleBudget(lbID, rec.Rules, sets); err != nil {
			return err
		}
		if err := requireBackendPools(tx, req.Rules, rec.Region); err != nil {
			return err
		}
		rs.Rules, rs.Version, rs.UpdatedAt = req.Rules, rs.Version+1, c.now()
		return putJSON(tx.Bucket(bucketRuleSets), ruleSetKey(lbID, name), rs)
	})
	return rs, created, err
}

// deleteRuleSet removes set name of load balancer lbID under If-Match.
func (c *cloud) deleteRuleSet(lbID, name, ifMatch string) error {
	return c.update(func(tx *bolt.Tx) error {
		rs, err := getRuleSet(tx, lbID, name)
		if err != nil {
			return err
		}
		if err := checkIfMatch(ifMatch, rs.Version); err != nil {
			return err
		}
		return dropObject(tx, bucketRuleSets, kindRuleSet, ruleSetKey(lbID, name))
	})
}

func indexOfSet(sets []exampleapi.RuleSet, name string) int {
	for i, s := range sets {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// requireRuleBudget checks that load balancer lbID's own rules and its
// sets' stay within exampleapi.MaxRules together.
func requireRuleBudget(lbID string, own []exampleapi.Rule, sets []exampleapi.RuleSet) error {
	n := len(own)
	for _, s := range sets {
		n += len(s.Rules)
	}
	if n > exampleapi.MaxRules {
		return conflict("load balancer %s would have %d rules, its own and its rule sets' (at most %d)", lbID, n, exampleapi.MaxRules)
	}
	return nil
}

// validateRuleSet checks a set's name and what its rules hold on their
// own: names unique in the set, an order key and no priority each, and
// the cloud's checks of one rule.
func validateRuleSet(name string, req *exampleapi.PutRuleSetRequest) error {
	if !exampleapi.RuleNameRE.MatchString(name) {
		return invalid("name", "%q is not a rule set name (1-128 letters, digits and ._-/:@#*)", name)
	}
	if n := len(req.Rules); n > exampleapi.MaxRules {
		return invalid("rules", "has %d rules (at most %d)", n, exampleapi.MaxRules)
	}
	names := map[string]int{}
	for i, r := range req.Rules {
		f := fmt.Sprintf("rules[%d]", i)
		if err := checkRuleName(f, i, r.Name, names, "rule set"); err != nil {
			return err
		}
		switch {
		case r.Priority != 0:
			return invalid(f+".priority", "a rule set's rules have no priority: they are ordered by order_key")
		case r.OrderKey == "":
			return invalid(f+".order_key", "is required: a rule set's rules are ordered by it")
		case r.ListenerPort < 1 || r.ListenerPort > 65535:
			return invalid(f+".listener_port", "%d is not a port (1-65535)", r.ListenerPort)
		case r.ListenerProtocol != "" && r.ListenerProtocol != exampleapi.ProtocolHTTP && r.ListenerProtocol != exampleapi.ProtocolHTTPS:
			return invalid(f+".listener_protocol", "%q: a rule set's rules route http and https listeners only, which order rules by key",
				r.ListenerProtocol)
		}
		if err := validateRule(f, r); err != nil {
			return err
		}
	}
	return nil
}

// requireSetsBudget refuses a load balancer change that takes its rules
// past exampleapi.MaxRules with its sets'.
func requireSetsBudget(tx *bolt.Tx, lbID string, u exampleapi.LoadBalancerSettings) error {
	sets, err := ruleSetsOf(tx, lbID)
	if err != nil {
		return err
	}
	return requireRuleBudget(lbID, u.Rules, sets)
}

// requireNoRuleSets refuses to delete load balancer lbID while it has
// rule sets, as a target pool in use is refused.
func requireNoRuleSets(tx *bolt.Tx, lbID string) error {
	sets, err := ruleSetsOf(tx, lbID)
	if err != nil || len(sets) == 0 {
		return err
	}
	names := make([]string, 0, min(len(sets), maxReferrersNamed))
	for _, s := range sets[:min(len(sets), maxReferrersNamed)] {
		names = append(names, s.Name)
	}
	more := ""
	if n := len(sets) - len(names); n > 0 {
		more = fmt.Sprintf(", and %d more", n)
	}
	return conflict("load balancer %s still has %d rule sets (%s%s); delete them first", lbID, len(sets), strings.Join(names, ", "), more)
}
