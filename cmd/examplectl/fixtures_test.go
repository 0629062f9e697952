package main

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
)

// Plan ids of the fixtures.
const (
	webAwaiting   = "plan-0c0c0c0c0c0c"
	webSuperseded = "plan-0b0b0b0b0b0b"
	webApplied    = "plan-0a0a0a0a0a0a"
	apiFailed     = "plan-1a1a1a1a1a1a"
	routesPlan    = "plan-2a2a2a2a2a2a"
	dbDenied      = "plan-3a3a3a3a3a3a"
	groupPlan     = "plan-4a4a4a4a4a4a"
	poolsPlan     = "plan-5a5a5a5a5a5a"
	apiLockID     = "9d3e2c1a-7b6f-4e5d-8c2b-1a0f9e8d7c6b"
)

// People in the fixtures' records.
const (
	alice = "alice@example.com" // made web's pending change
	bob   = "bob@example.com"   // approved it
	carol = "carol@example.com" // approved web's applied plan
)

func ago(d time.Duration) time.Time { return testNow.Add(-d) }

func decidedAgo(d time.Duration) *time.Time {
	t := ago(d)
	return &t
}

const webMainTF = `# Rendered by example-cloud-controller-manager. Do not edit.

module "lb" {
  source = "./modules/loadbalancer"
  type   = "lb-medium"
}
`

const webPlanText = `Terraform will perform the following actions:

  # module.lb.example_load_balancer.this will be updated in-place
  ~ resource "example_load_balancer" "this" {
      ~ type = "lb-small" -> "lb-medium"
    }

Plan: 0 to add, 1 to change, 0 to destroy.
`

const webAppliedText = `Plan: 3 to add, 0 to change, 0 to destroy.
`

// fixtures are the records of a scope: Services web (manual policy, two
// approvers required, a plan awaiting approval with one), api (auto, failed
// on a state lock) and db (a plan a policy rule denies), the route set
// (manual, awaiting approval), and the load balancer group front (web and
// api share it; a destroy awaiting approval), and the target pools (one
// node draining, one waiting for the floor).
type fixtures struct {
	web, api, db, routes  *records.Record
	group, pools          *records.Record
	webSvc, apiSvc, dbSvc *corev1.Service
}

func (s *scope) fixtures() *fixtures {
	s.t.Helper()
	f := &fixtures{webSvc: s.service("web"), apiSvc: s.service("api"), dbSvc: s.service("db")}
	files := map[string]string{"main.tf": webMainTF}
	f.web = &records.Record{
		Object:            serviceRef(f.webSvc),
		Workspace:         "demo-service-" + s.svcNS + "-web-1a2b3c4d",
		Policy:            "manual",
		RequiredApprovals: 2,
		Files:             files,
		Plans: []records.Plan{
			{
				ID: webAwaiting, Kind: records.KindChange, HCLHash: filesHash(files),
				Summary: runner.PlanSummary{Change: 1, Resources: []runner.ResourceChange{
					{Address: "module.lb.example_load_balancer.this", Type: "example_load_balancer", Action: "update"},
				}},
				Policy: "manual", Outcome: records.AwaitingApproval, PlannedAt: ago(5 * time.Minute), Text: webPlanText,
				Saved:  []byte("PK\x03\x04 saved plan of web"),
				Author: alice,
				Verdicts: []records.Verdict{{
					Rule: "type-change", Effect: "require-approval", Message: "the load balancer type changes: clients reconnect",
				}},
				Approvals: []records.Approval{{By: bob, At: ago(3 * time.Minute), Object: webAwaiting + "-x7k2p", Comment: "sizing checked"}},
			},
			{
				ID: webSuperseded, Kind: records.KindChange, HCLHash: "5e5e5e5e",
				Summary: runner.PlanSummary{Change: 2}, Policy: "manual", Outcome: records.Superseded,
				PlannedAt: ago(20 * time.Minute), DecidedAt: decidedAgo(5 * time.Minute), Text: "Plan: 0 to add, 2 to change, 0 to destroy.\n",
			},
			{
				ID: webApplied, Kind: records.KindChange, HCLHash: "a0a0a0a0",
				Summary: runner.PlanSummary{Add: 3}, Policy: "manual", Outcome: records.Applied,
				PlannedAt: ago(2 * time.Hour), DecidedAt: decidedAgo(119 * time.Minute), Text: webAppliedText,
				Approvals: []records.Approval{
					{By: bob, At: ago(2*time.Hour - 30*time.Second), Object: webApplied + "-a1b2c"},
					{By: carol, At: ago(119 * time.Minute), Object: webApplied + "-d3e4f"},
				},
			},
		},
		Drift:     &records.Drift{CheckedAt: ago(10 * time.Minute)},
		UpdatedAt: ago(5 * time.Minute),
	}
	f.api = oneChange(serviceRef(f.apiSvc), "demo-service-"+s.svcNS+"-api-5c6d7e8f", "auto", "# api\n", records.Plan{
		ID: apiFailed, HCLHash: "b1b1b1b1", Summary: runner.PlanSummary{Add: 1, Change: 1, Remove: 1}, Outcome: records.Failed,
		Error:     "Error acquiring the state lock\n\nLock Info:\n  ID: " + apiLockID,
		PlannedAt: ago(2 * time.Minute), DecidedAt: decidedAgo(time.Minute),
	})
	f.api.Lock = &records.LockInfo{ID: apiLockID, Holder: "terraform@ccm-7d9f-abcde", Created: ago(3 * time.Hour), SeenAt: ago(time.Minute)}
	f.api.Drift = &records.Drift{CheckedAt: ago(time.Hour), Detected: true, PlanID: "plan-1b1b1b1b1b1b", Resources: []runner.ResourceChange{
		{Address: "module.lb.example_load_balancer.this", Type: "example_load_balancer", Action: "update"},
	}}
	f.db = oneChange(serviceRef(f.dbSvc), "demo-service-"+s.svcNS+"-db-7e8f9a0b", "auto", "# db\n", records.Plan{
		ID: dbDenied, HCLHash: "d3d3d3d3", Summary: runner.PlanSummary{Add: 1}, Outcome: records.Denied, Author: "mallory@example.com",
		Verdicts:  []records.Verdict{{Rule: "internal-only", Effect: "deny", Message: "Services in this namespace must be internal"}},
		PlannedAt: ago(10 * time.Minute), DecidedAt: decidedAgo(10 * time.Minute),
		Text: "Plan: 1 to add, 0 to change, 0 to destroy.\n",
	})
	f.routes = oneChange(objectref.Ref{Kind: objectref.KindRouteSet, Name: objectref.ClusterName}, "demo-routeset-cluster-9a8b7c6d", "manual", "# routes\n", records.Plan{
		ID: routesPlan, HCLHash: "c2c2c2c2", Summary: runner.PlanSummary{Add: 2}, Outcome: records.AwaitingApproval,
		PlannedAt: ago(30 * time.Second), Text: "Plan: 2 to add, 0 to change, 0 to destroy.\n",
	})
	f.group = oneChange(objectref.Ref{Kind: objectref.KindServiceGroup, Namespace: s.svcNS, Name: "front"}, "demo-group-"+s.svcNS+"-front-4d5e6f7a", "auto", "# group front\n", records.Plan{
		ID: groupPlan, HCLHash: "e4e4e4e4", Summary: runner.PlanSummary{Change: 1}, Outcome: records.AwaitingApproval,
		Verdicts:  []records.Verdict{{Rule: "load-balancer-replace", Effect: "require-approval", Message: "the plan replaces a load balancer"}},
		PlannedAt: ago(90 * time.Second), Text: "Plan: 0 to add, 1 to change, 0 to destroy.\n",
	})
	f.group.Members = []objectref.Ref{serviceRef(f.webSvc), serviceRef(f.apiSvc)}
	f.pools = oneChange(objectref.TargetPools, "demo-targetpools-cluster-1f2e3d4c", "auto", "# target pools\n", records.Plan{
		ID: poolsPlan, HCLHash: "f5f5f5f5", Summary: runner.PlanSummary{Change: 1}, Outcome: records.Applied,
		PlannedAt: ago(10 * time.Second), DecidedAt: decidedAgo(10 * time.Second), Text: "Plan: 0 to add, 1 to change, 0 to destroy.\n",
	})
	// The pools' next apply under way.
	f.pools.Applying = &records.ApplyStart{Plan: records.Plan{ID: "plan-5f5f5f5f5f5f", Kind: records.KindChange, Summary: runner.PlanSummary{Change: 1}, Outcome: records.AwaitingApproval},
		Replica: "ccm-1_ab12", StartedAt: ago(5 * time.Second)}
	until := ago(-20 * time.Second)
	f.pools.Leaving = []records.LeavingNode{
		{Node: "node-b", Instance: "i-0b0b0b0b0b0b0b0b", Pool: "all", Reason: "drain under way", State: records.LeavingDraining, Since: ago(10 * time.Second), Until: &until},
		{Node: "node-c", Instance: "i-0c0c0c0c0c0c0c0c", Pool: "all", Reason: "autoscaler deletion taint", State: records.LeavingWaiting, Since: ago(10 * time.Second)},
	}
	for _, r := range []*records.Record{f.web, f.api, f.db, f.routes, f.group, f.pools} {
		s.save(r)
	}
	return f
}

// oneChange is the record of object in workspace under policy whose one
// plan is p, a change planned under that policy; main.tf stands in for its
// rendering. It was last updated when p was decided, or planned if p waits.
func oneChange(object objectref.Ref, workspace, policy, mainTF string, p records.Plan) *records.Record {
	p.Kind, p.Policy = records.KindChange, policy
	updated := p.PlannedAt
	if p.DecidedAt != nil {
		updated = *p.DecidedAt
	}
	return &records.Record{Object: object, Workspace: workspace, Policy: policy,
		Files: map[string]string{"main.tf": mainTF}, Plans: []records.Plan{p}, UpdatedAt: updated}
}

func serviceRef(svc *corev1.Service) objectref.Ref {
	return objectref.Ref{Kind: objectref.KindService, Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}
}
