package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/records"
)

func testPlan(t *testing.T, s *scope) {
	s.fixtures()
	out := s.mustRun(nil, "plan", "plan-shop/web")
	golden(t, "plan.golden", out)
	// The same Service named with -n.
	if again := s.mustRun(nil, "plan", "web", "-n", "plan-shop"); again != out {
		t.Errorf("plan web -n plan-shop differs from plan plan-shop/web:\n%s", again)
	}

	// An older plan: its own text; the files are flagged as the current
	// rendering, not the one it was made from.
	old := s.mustRun(nil, "plan", "plan-shop/web", "--plan-id", webApplied)
	for _, want := range []string{
		"=== " + webApplied + " of Service plan-shop/web",
		"outcome:   applied\n",
		"decided:   2025-06-01T10:01:00Z (119m ago)",
		webAppliedText,
		"the current rendering: " + webApplied + " was made from another one (sha256 a0a0a0a0)",
		webMainTF,
	} {
		if !strings.Contains(old, want) {
			t.Errorf("plan --plan-id %s lacks %q:\n%s", webApplied, want, old)
		}
	}
	s.mustFail("has no recorded plan plan-ffffffffffff; recorded: "+webAwaiting+" (awaiting-approval), "+webSuperseded+" (superseded), "+webApplied+" (applied)",
		nil, "plan", "plan-shop/web", "--plan-id", "plan-ffffffffffff")

	// The route set; a failed plan with no text.
	routes := s.mustRun(nil, "plan", "routes")
	for _, want := range []string{"=== " + routesPlan + " of the route set (workspace demo-routeset-cluster-9a8b7c6d)", "examplectl approve routes " + routesPlan, "# routes\n"} {
		if !strings.Contains(routes, want) {
			t.Errorf("plan routes lacks %q:\n%s", want, routes)
		}
	}
	api := s.mustRun(nil, "plan", "plan-shop/api")
	for _, want := range []string{"error:     Error acquiring the state lock ...", "(no plan text recorded)"} {
		if !strings.Contains(api, want) {
			t.Errorf("plan api lacks %q:\n%s", want, api)
		}
	}
}

func testHistory(t *testing.T, s *scope) {
	s.fixtures()
	golden(t, "history.golden", s.mustRun(nil, "history", "history-shop/web"))

	var plans []records.Plan
	if err := json.Unmarshal([]byte(s.mustRun(nil, "history", "api", "-n", "history-shop", "-o", "json")), &plans); err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].ID != apiFailed || !strings.Contains(plans[0].Error, "Lock Info:\n  ID: "+apiLockID) {
		t.Errorf("history -o json: %+v", plans)
	}
	if out := s.mustRun(nil, "history", "routes"); !strings.Contains(out, routesPlan+"   change   awaiting-approval   +2 ~0 -0") {
		t.Errorf("history routes:\n%s", out)
	}
}
