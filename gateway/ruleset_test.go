package gateway

import (
	"testing"

	"github.com/example/cloud-provider-example/lbmodel"
)

// A set with builds shares its slices with the admitted one: what a unit
// refused added is never seen through the admitted set, nor is an
// admitted rule changed under it, and the next unit builds from the
// admitted set alone.
func TestRuleSetWith(t *testing.T) {
	cand := func(name, listenerHost, host string) candidate {
		return candidate{rule: lbmodel.Rule{Name: name, Hostname: host}, listenerHost: listenerHost}
	}
	unitOf := func(cs ...candidate) *unit { return &unit{http: cs} }
	var s ruleSet
	s = s.with(unitOf(cand("a", "*.example", "a.example"), cand("b", "", "")), nil)
	s.keep()

	refused := s.with(unitOf(cand("a", "a.example", "a.example"), cand("c", "", "c.example")), nil)
	if len(refused.http) != 3 || refused.http[0].listenerHost != "a.example" {
		t.Fatalf("with: %+v, want a through its more specific listener, and c", refused.http)
	}
	if len(s.http) != 2 || s.http[0].listenerHost != "*.example" || s.wide != 1 {
		t.Fatalf("admitted set changed by a unit not admitted: %+v (wide %d)", s.http, s.wide)
	}

	next := s.with(unitOf(cand("d", "", "d.example"), cand("d", "", "d.example")), nil)
	next.keep()
	if names := []string{next.http[0].rule.Name, next.http[1].rule.Name, next.http[2].rule.Name}; len(next.http) != 3 || names[2] != "d" {
		t.Fatalf("next: %q, want a, b, d once", names)
	}
	if _, c := next.named["c"]; next.named["d"] != 2 || c {
		t.Errorf("named %v, want d at 2 and no c", next.named)
	}
}
