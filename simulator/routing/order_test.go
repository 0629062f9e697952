package routing

import (
	"net/http"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A listener looks at its numbered rules first, then at the keyed ones of
// the load balancer and its rule sets together by key; equal keys go by
// set name, the load balancer's own first. Each request below is matched
// by several rules, so only that order picks the one named.
func TestDecideOrdersNumberedThenKeyedRules(t *testing.T) {
	web := exampleapi.Listener{Protocol: "http", Port: 80}
	fixed := func(code int) *exampleapi.FixedResponse { return &exampleapi.FixedResponse{StatusCode: code} }
	prefix := func(name, key, path string, code int) exampleapi.Rule {
		return exampleapi.Rule{Name: name, ListenerPort: 80, OrderKey: key, PathType: exampleapi.PathPrefix, Path: path, FixedResponse: fixed(code)}
	}
	var lb exampleapi.LoadBalancer
	lb.Listeners = []exampleapi.Listener{web}
	lb.Rules = []exampleapi.Rule{
		{Name: "numbered", ListenerPort: 80, Priority: 50000, PathType: exampleapi.PathExact, Path: "/numbered", FixedResponse: fixed(418)},
		{Name: "fence", ListenerPort: 80, OrderKey: "m", Hostnames: []string{"shop.example.test"}, FixedResponse: fixed(404)},
		prefix("own", "a", "/api/own", 201),
	}
	sets := []exampleapi.RuleSet{
		// Listed out of name order: the cloud orders them, not the list.
		{Name: "b-set", Rules: []exampleapi.Rule{prefix("api", "a", "/api", 202), prefix("late", "z", "/", 203)}},
		{Name: "a-set", Rules: []exampleapi.Rule{prefix("api", "a", "/api/v2", 204), prefix("numbered", "0", "/numbered", 205)}},
	}
	for _, c := range []struct {
		host, path string
		status     int
		rule, set  string
	}{
		{"shop.example.test", "/numbered", 418, "numbered", ""}, // before a-set's key "0"
		{"shop.example.test", "/api/own", 201, "own", ""},       // key "a": the load balancer's own first
		{"shop.example.test", "/api/v2", 204, "api", "a-set"},   // key "a": then sets by name
		{"shop.example.test", "/api/v1", 202, "api", "b-set"},
		{"shop.example.test", "/other", 404, "fence", ""}, // key "m" before "z"
		{"else.example.test", "/other", 203, "late", "b-set"},
	} {
		d, err := Decide(lb, sets, web, exampleapi.SimulatedRequest{ListenerPort: 80, Host: c.host, Path: c.path, Method: http.MethodGet},
			func(string) (int, error) { return 1, nil })
		if err != nil || d.Status != c.status || d.Rule != c.rule || d.RuleSet != c.set {
			t.Errorf("%s%s: %+v, %v; want %d by rule %q of set %q", c.host, c.path, d, err, c.status, c.rule, c.set)
		}
	}
}

// A set's rule has its own identity for the data plane's state (weighted
// round robin, session tokens): two sets may name a rule alike.
func TestRuleIDNamesTheSet(t *testing.T) {
	for _, c := range []struct {
		d    Decision
		want string
	}{
		{Decision{Rule: "api"}, "api"},
		{Decision{Rule: "api", RuleSet: "team-a"}, "team-a api"},
	} {
		if got := c.d.RuleID(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
}
