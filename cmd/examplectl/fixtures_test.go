package main

import (
	"time"

	corev1 "k8s.io/api/core/v1"

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
	apiLockID     = "9d3e2c1a-7b6f-4e5d-8c2b-1a0f9e8d7c6b"
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

// fixtures are the records of a scope: Services web (manual policy, a plan
// awaiting approval) and api (auto, failed on a state lock), the route
// set (manual, awaiting approval).
type fixtures struct {
	web, api, routes *records.Record
	webSvc, apiSvc   *corev1.Service
}

func (s *scope) fixtures() *fixtures {
	s.t.Helper()
	f := &fixtures{webSvc: s.service("web"), apiSvc: s.service("api")}
	files := map[string]string{"main.tf": webMainTF}
	f.web = &records.Record{
		Object:    serviceRef(f.webSvc),
		Workspace: "demo-service-" + s.svcNS + "-web-1a2b3c4d",
		Policy:    "manual",
		Files:     files,
		Plans: []records.Plan{
			{
				ID: webAwaiting, Kind: records.KindChange, HCLHash: filesHash(files),
				Summary: runner.PlanSummary{Change: 1, Resources: []runner.ResourceChange{
					{Address: "module.lb.example_load_balancer.this", Type: "example_load_balancer", Action: "update"},
				}},
				Policy: "manual", Outcome: records.AwaitingApproval, PlannedAt: ago(5 * time.Minute), Text: webPlanText,
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
			},
		},
		Drift:     &records.Drift{CheckedAt: ago(10 * time.Minute)},
		UpdatedAt: ago(5 * time.Minute),
	}
	f.api = &records.Record{
		Object:    serviceRef(f.apiSvc),
		Workspace: "demo-service-" + s.svcNS + "-api-5c6d7e8f",
		Policy:    "auto",
		Files:     map[string]string{"main.tf": "# api\n"},
		Plans: []records.Plan{{
			ID: apiFailed, Kind: records.KindChange, HCLHash: "b1b1b1b1",
			Summary: runner.PlanSummary{Add: 1, Change: 1, Remove: 1}, Policy: "auto", Outcome: records.Failed,
			Error:     "Error acquiring the state lock\n\nLock Info:\n  ID: " + apiLockID,
			PlannedAt: ago(2 * time.Minute), DecidedAt: decidedAgo(time.Minute),
		}},
		Lock: &records.LockInfo{ID: apiLockID, Holder: "terraform@ccm-7d9f-abcde", Created: ago(3 * time.Hour), SeenAt: ago(time.Minute)},
		Drift: &records.Drift{CheckedAt: ago(time.Hour), Detected: true, PlanID: "plan-1b1b1b1b1b1b", Resources: []runner.ResourceChange{
			{Address: "module.lb.example_load_balancer.this", Type: "example_load_balancer", Action: "update"},
		}},
		UpdatedAt: ago(time.Minute),
	}
	f.routes = &records.Record{
		Object:    records.ObjectRef{Kind: kindRouteSet, Name: routeSetName},
		Workspace: "demo-routeset-cluster-9a8b7c6d",
		Policy:    "manual",
		Files:     map[string]string{"main.tf": "# routes\n"},
		Plans: []records.Plan{{
			ID: routesPlan, Kind: records.KindChange, HCLHash: "c2c2c2c2",
			Summary: runner.PlanSummary{Add: 2}, Policy: "manual", Outcome: records.AwaitingApproval,
			PlannedAt: ago(30 * time.Second), Text: "Plan: 2 to add, 0 to change, 0 to destroy.\n",
		}},
		UpdatedAt: ago(30 * time.Second),
	}
	for _, r := range []*records.Record{f.web, f.api, f.routes} {
		s.save(r)
	}
	return f
}

func serviceRef(svc *corev1.Service) records.ObjectRef {
	return records.ObjectRef{Kind: kindService, Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}
}
