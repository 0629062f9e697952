package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/runner"
)

func testApprove(t *testing.T, s *scope) {
	f := s.fixtures()
	web := "approve-shop/web"

	// Refused, and nothing created: an unknown id, old ones, a denied one,
	// not an id.
	s.mustFail("refusing to approve plan-ffffffffffff: it is not a recorded plan of Service approve-shop/web ("+webAwaiting+" is awaiting approval; recorded plans: ",
		nil, "approve", web, "plan-ffffffffffff")
	s.mustFail("refusing to approve "+webSuperseded+": it is superseded, not awaiting approval ("+webAwaiting+" is awaiting approval)",
		nil, "approve", web, webSuperseded)
	s.mustFail("refusing to approve "+webApplied+": it is applied, not awaiting approval", nil, "approve", web, webApplied)
	s.mustFail("refusing to approve "+dbDenied+": a policy rule denies it (internal-only (deny)), so it is never applied", nil, "approve", "approve-shop/db", dbDenied)
	s.mustFail(`"latest" is not a plan id`, nil, "approve", web, "latest")
	s.mustFail("--comment is 1025 characters; at most 1024", nil, "approve", web, "--comment", strings.Repeat("é", 1025))
	// auto policy, nothing awaiting: the error lists what there is.
	s.mustFail("no plan of Service approve-shop/api is awaiting approval (policy auto); recorded plans: "+apiFailed+" (failed)",
		nil, "approve", "approve-shop/api")
	if a := s.approvals(); len(a) != 0 {
		t.Fatalf("refused approvals created %d PlanApprovals", len(a))
	}

	// The right id, explicitly: a PlanApproval as the caller, naming the
	// Service by its uid. bob approved before: 2 of the 2 required.
	out := s.mustRun(nil, "approve", web, webAwaiting, "--comment", "LGTM")
	for _, want := range []string{
		"Approved " + webAwaiting + " (change, +0 ~1 -0, planned 5m ago) of Service approve-shop/web.\n",
		"Created PlanApproval approve-system/" + webAwaiting + "-",
		" as " + s.user + ".\n",
		"Approvals: 2 of 2 required (" + bob + ", " + s.user + ").\nThe controller applies exactly this saved plan, nothing else.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("approve output lacks %q:\n%s", want, out)
		}
	}
	created := s.approvals()
	if len(created) != 1 {
		t.Fatalf("%d PlanApprovals; want 1", len(created))
	}
	// The groups are the caller's (a ServiceAccount's) as the API server
	// authenticated them.
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + s.ccmNS, "system:authenticated"}
	want := reviewapi.PlanApprovalSpec{Object: serviceRef(f.webSvc), PlanID: webAwaiting, Approver: s.user, Comment: "LGTM", ApproverGroups: groups}
	if a := created[0]; !reflect.DeepEqual(a.Spec, want) || !strings.Contains(out, a.Name) {
		t.Errorf("PlanApproval %s = %+v; want %+v", a.Name, a.Spec, want)
	}

	// Without an id: the latest plan awaiting approval (a newer one now),
	// which needs one more approver after this one.
	newer := *f.web
	newer.Plans = append([]records.Plan{{
		ID: "plan-0d0d0d0d0d0d", Kind: records.KindChange, HCLHash: "d0d0d0d0", Summary: runner.PlanSummary{Add: 1},
		Policy: "manual", Outcome: records.AwaitingApproval, PlannedAt: ago(time.Minute),
	}}, f.web.Plans...)
	newer.Plans[1].Outcome = records.Superseded
	s.save(&newer)
	out = s.mustRun(nil, "approve", "web", "-n", "approve-shop")
	for _, want := range []string{
		"Approved plan-0d0d0d0d0d0d (change, +1 ~0 -0, planned 60s ago)",
		"Approvals: 1 of 2 required (" + s.user + ").\nOnce 1 more reviewer(s) approve it, the controller applies exactly this saved plan",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("approve without id lacks %q:\n%s", want, out)
		}
	}
	if a := s.approvals(); len(a) != 2 {
		t.Fatalf("%d PlanApprovals after the second approve; want 2", len(a))
	}

	// Once the record shows the caller's approval, a second is refused; so
	// is an approval of the caller's own change.
	counted := newer
	counted.Plans = append([]records.Plan(nil), newer.Plans...)
	counted.Plans[0].Approvals = []records.Approval{{By: s.user, At: ago(30 * time.Second)}}
	s.save(&counted)
	s.mustFail("refusing to approve plan-0d0d0d0d0d0d again: the record shows you ("+s.user+") approved it 30s ago; it needs 2 distinct approvers, so another reviewer must approve it",
		nil, "approve", web)
	// A record written before plans kept every author names one.
	counted.Plans[0].Approvals, counted.Plans[0].Author = nil, s.user
	s.save(&counted)
	s.mustFail("refusing to approve plan-0d0d0d0d0d0d: you ("+s.user+") made a change it plans", nil, "approve", web)
	counted.Plans[0].Author, counted.Plans[0].Authors = "", []string{"carol", s.user}
	s.save(&counted)
	s.mustFail("refusing to approve plan-0d0d0d0d0d0d: you ("+s.user+") made a change it plans (the record names you among its authors)", nil, "approve", web)
	if a := s.approvals(); len(a) != 2 {
		t.Fatalf("%d PlanApprovals after refusals; want 2", len(a))
	}

	// The route set: named by kind and name, one approver required.
	out = s.mustRun(nil, "approve", "routes")
	if !strings.Contains(out, "Approvals: 1 of 1 required ("+s.user+").\nThe controller applies exactly this saved plan") {
		t.Errorf("approve routes:\n%s", out)
	}
	var routes *reviewapi.PlanApproval
	for _, a := range s.approvals() {
		if a.Spec.PlanID == routesPlan {
			routes = a
		}
	}
	if want := (reviewapi.PlanApprovalSpec{Object: objectref.Ref{Kind: "RouteSet", Name: "cluster"}, PlanID: routesPlan, Approver: s.user, ApproverGroups: groups}); routes == nil || !reflect.DeepEqual(routes.Spec, want) {
		t.Errorf("route set approval = %+v; want %+v", routes, want)
	}

	// A load balancer group: named by kind, namespace and name (no uid).
	out = s.mustRun(nil, "approve", "group:approve-shop/front", groupPlan)
	if !strings.Contains(out, "Approved "+groupPlan+" (change, +0 ~1 -0, planned 90s ago) of load balancer group approve-shop/front.\n") {
		t.Errorf("approve group:\n%s", out)
	}
	var group *reviewapi.PlanApproval
	for _, a := range s.approvals() {
		if a.Spec.PlanID == groupPlan {
			group = a
		}
	}
	if want := (reviewapi.PlanApprovalSpec{Object: objectref.Ref{Kind: "ServiceGroup", Namespace: "approve-shop", Name: "front"}, PlanID: groupPlan, Approver: s.user, ApproverGroups: groups}); group == nil || !reflect.DeepEqual(group.Spec, want) {
		t.Errorf("group approval = %+v; want %+v", group, want)
	}

	// A record left from an earlier Service of the same name is not the
	// current Service's: refused.
	oldSvc := s.service("recreated")
	stale := *f.web
	stale.Object = serviceRef(oldSvc)
	stale.Object.UID = "00000000-0000-0000-0000-000000000000"
	stale.Workspace = "demo-service-approve-shop-recreated-0f0f0f0f"
	s.save(&stale)
	s.mustFail("belongs to an earlier Service of that name", nil, "approve", "approve-shop/recreated", webAwaiting)
	if a := s.approvals(); len(a) != 4 {
		t.Errorf("%d PlanApprovals after a stale record's refusal; want 4", len(a))
	}

	// Someone without a reviewer's rights is told which they lack.
	nobody, _ := s.serviceAccount("nobody", false)
	_, _, err := s.runAs(nobody, nil, "approve", "routes")
	if err == nil || !strings.Contains(err.Error(), "a reviewer needs, in the controller's namespace approve-system: get and list on configmaps, create on planapprovals.review.example.com (approve)") {
		t.Errorf("approve without rights: %v", err)
	}
}
