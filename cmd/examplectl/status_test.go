package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/cloud-provider-example/shard"
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
		if a := it.Applying; a != nil {
			line += " applying " + a.Plan.ID + " on " + a.Replica
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
		"pools auto " + poolsPlan + " applied leaving node-b draining leaving node-c waiting applying plan-5f5f5f5f5f5f on ccm-1_ab12 required 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("status -o json:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	s.mustFail(`unknown output format "yaml": want json or wide`, nil, "status", "-o", "yaml")
	testStatusReplicas(t, s)
}

// testStatusReplicas: once the controller is sharded, REPLICA names the
// replica owning each object, read from the shard Leases a real holder
// keeps; a reviewer who may not list Leases gets the rest and a note.
func testStatusReplicas(t *testing.T, s *scope) {
	const id = "example-ccm-0_5e1f"
	h, err := shard.New(shard.Config{Client: s.client, Namespace: s.ccmNS, Prefix: shard.ControllerPrefix, Identity: id,
		Shards: 12, LeaseDuration: 15 * time.Second, Leads: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return len(h.Owned()) == 12, nil
	})
	if err != nil {
		t.Fatalf("the replica never held all 12 shards: %v", h.Owned())
	}

	out := s.mustRun(nil, "status")
	lines := strings.Split(strings.TrimSpace(strings.Split(out, "\n\n")[0]), "\n")
	if !strings.Contains(lines[0], " REPLICA") {
		t.Fatalf("sharded status has no REPLICA column:\n%s", out)
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, " "+id+" ") && !strings.HasSuffix(l, " "+id) {
			t.Errorf("status row does not name the owner %s: %q", id, l)
		}
	}
	var items []statusItem
	if err := json.Unmarshal([]byte(s.mustRun(nil, "status", "-o", "json")), &items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Replica != id {
			t.Errorf("status -o json: %s has replica %q, want %s", it.Object.Arg(), it.Replica, id)
		}
	}

	kubeconfig := s.reviewerWithoutLeases("reviewer-no-leases")
	out, errOut, err := s.runAs(kubeconfig, nil, "status")
	if err != nil || strings.Contains(out, "REPLICA") || !strings.Contains(errOut, "No REPLICA column: ") || !strings.Contains(errOut, "leases.coordination.k8s.io in "+s.ccmNS) {
		t.Errorf("status without list on Leases: err %v, stdout:\n%s\nstderr: %s", err, out, errOut)
	}
}
