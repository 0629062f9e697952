package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func testStatus(t *testing.T, s *scope) {
	// No records yet: a note on stderr, nothing on stdout.
	out, errOut, err := s.run(nil, "status")
	if err != nil || out != "" || !strings.Contains(errOut, "No plan records in namespace status-system.") {
		t.Fatalf("empty status: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	s.fixtures()
	golden(t, "status.golden", s.mustRun(nil, "status"))
	wide := s.mustRun(nil, "status", "-o", "wide")
	if !strings.HasPrefix(wide, "OBJECT                    WORKSPACE ") || !strings.Contains(wide, " demo-service-status-shop-web-1a2b3c4d ") ||
		!strings.Contains(wide, " status-shop/web, status-shop/api\n") {
		t.Errorf("status -o wide has no WORKSPACE or MEMBERS column:\n%s", wide)
	}

	var items []statusItem
	if err := json.Unmarshal([]byte(s.mustRun(nil, "status", "-o", "json")), &items); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		line := it.Object.Arg() + " " + it.Policy
		if it.LastPlan != nil {
			line += " " + it.LastPlan.ID + " " + string(it.LastPlan.Outcome)
		}
		if it.Lock != nil {
			line += " lock " + it.Lock.ID
		}
		if p := it.LastPlan; p != nil && p.Author != "" {
			line += " by " + p.Author
		}
		for _, a := range it.LastPlan.Approvals {
			line += fmt.Sprintf(" approved by %s at %s (%s)", a.By, a.At.Format(time.Kitchen), a.Comment)
		}
		for _, v := range it.LastPlan.Verdicts {
			line += fmt.Sprintf(" %s: %s: %s", v.Effect, v.Rule, v.Message)
		}
		for _, m := range it.Members {
			line += " member " + m.Namespace + "/" + m.Name
		}
		for _, l := range it.Leaving {
			line += " leaving " + l.Node + " " + l.State
		}
		line += fmt.Sprintf(" required %d", it.RequiredApprovals)
		got = append(got, line)
	}
	want := []string{
		"routes manual " + routesPlan + " awaiting-approval required 1",
		"status-shop/api auto " + apiFailed + " failed lock " + apiLockID + " required 1",
		"status-shop/db auto " + dbDenied + " denied by mallory@example.com deny: internal-only: Services in this namespace must be internal required 1",
		"status-shop/web manual " + webAwaiting + " awaiting-approval by alice@example.com approved by bob@example.com at 11:57AM (sizing checked)" +
			" require-approval: type-change: the load balancer type changes: clients reconnect required 2",
		"group:status-shop/front auto " + groupPlan + " awaiting-approval require-approval: load-balancer-replace: the plan replaces a load balancer" +
			" member status-shop/web member status-shop/api required 1",
		"pools auto " + poolsPlan + " applied leaving node-b draining leaving node-c waiting required 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("status -o json:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	s.mustFail(`unknown output format "yaml": want json or wide`, nil, "status", "-o", "yaml")
}
