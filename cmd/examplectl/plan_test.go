package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
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
		"outcome:      applied\n",
		"approvals:    2 approver(s)\n" +
			"                bob@example.com at 2025-06-01T10:00:30Z (119m ago), PlanApproval " + webApplied + "-a1b2c\n" +
			"                carol@example.com at 2025-06-01T10:01:00Z (119m ago), PlanApproval " + webApplied + "-d3e4f\n",
		"decided:      2025-06-01T10:01:00Z (119m ago)",
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
	// A load balancer group: its members, and how to approve it.
	group := s.mustRun(nil, "plan", "group:front", "-n", "plan-shop")
	for _, want := range []string{"=== " + groupPlan + " of load balancer group plan-shop/front", "members:      plan-shop/web, plan-shop/api\n",
		"examplectl approve group:plan-shop/front " + groupPlan, "# group front\n"} {
		if !strings.Contains(group, want) {
			t.Errorf("plan group lacks %q:\n%s", want, group)
		}
	}
	s.mustFail("no plan record for load balancer group plan-shop/back", nil, "plan", "group:plan-shop/back")
	api := s.mustRun(nil, "plan", "plan-shop/api")
	for _, want := range []string{"error:        Error acquiring the state lock ...", "(no plan text recorded)"} {
		if !strings.Contains(api, want) {
			t.Errorf("plan api lacks %q:\n%s", want, api)
		}
	}
	if strings.Contains(api, "approvals:") || strings.Contains(api, "author:") {
		t.Errorf("plan api shows approvals or an author it has not:\n%s", api)
	}
	// A denied plan: never applied, and why.
	db := s.mustRun(nil, "plan", "plan-shop/db")
	for _, want := range []string{
		"outcome:      denied (a policy rule denies it: it is never applied)\n",
		"author:       mallory@example.com\n",
		"verdicts:     internal-only (deny): Services in this namespace must be internal\n",
	} {
		if !strings.Contains(db, want) {
			t.Errorf("plan db lacks %q:\n%s", want, db)
		}
	}
	// A pod pool's plan applied under the pools' policy: no text (ADR 24),
	// and where its targets are.
	pool := objectref.PodPool(s.svcNS, "web", 80, corev1.ProtocolTCP)
	s.save(oneChange(pool, "demo-podpool-"+s.svcNS+"-web-80-tcp-5a6b7c8d", "auto", "# targets 10.244.1.5:8080\n", records.Plan{
		ID: "plan-7a7a7a7a7a7a", HCLHash: "a7a7a7a7", Summary: runner.PlanSummary{Change: 1}, Outcome: records.Applied,
		PlannedAt: ago(time.Minute), DecidedAt: decidedAgo(time.Minute),
	}))
	pods := s.mustRun(nil, "plan", "pods:"+s.svcNS+"/web-80-tcp")
	for _, want := range []string{"(a pod pool's plan applied under the pools' policy is recorded without its text: its targets are in main.tf below)", "# targets 10.244.1.5:8080"} {
		if !strings.Contains(pods, want) {
			t.Errorf("plan of a pod pool lacks %q:\n%s", want, pods)
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
	if err := json.Unmarshal([]byte(s.mustRun(nil, "history", "history-shop/web", "-o", "json")), &plans); err != nil {
		t.Fatal(err)
	}
	if p := plans[0]; len(plans) != 3 || p.Author != alice || len(p.Approvals) != 1 || p.Approvals[0].By != bob ||
		!p.Approvals[0].At.Equal(ago(3*time.Minute)) || p.Approvals[0].Comment != "sizing checked" ||
		len(p.Verdicts) != 1 || p.Verdicts[0].Message != "the load balancer type changes: clients reconnect" || p.SavedSHA256 == "" {
		t.Errorf("history -o json of web: %+v", plans)
	}
	if out := s.mustRun(nil, "history", "history-shop/db"); !strings.Contains(out, dbDenied+"   change   denied ") {
		t.Errorf("history db:\n%s", out)
	}
	if out := s.mustRun(nil, "history", "group:history-shop/front"); !strings.HasPrefix(out, "Members of load balancer group history-shop/front: history-shop/web, history-shop/api\n\n") ||
		!strings.Contains(out, groupPlan+"   change   awaiting-approval") {
		t.Errorf("history group:\n%s", out)
	}
	if out := s.mustRun(nil, "history", "routes"); !strings.Contains(out, routesPlan+"   change   awaiting-approval   +2 ~0 -0") {
		t.Errorf("history routes:\n%s", out)
	}
}
