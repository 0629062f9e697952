package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
)

func testApprove(t *testing.T, s *scope) {
	f := s.fixtures()
	key := string(annotations.LBApprovePlan)
	web := "approve-shop/web"

	// Refused, and nothing annotated: an unknown id, old ones, not an id.
	s.mustFail("refusing to approve plan-ffffffffffff: it is not a recorded plan of Service approve-shop/web ("+webAwaiting+" is awaiting approval; recorded plans: ",
		nil, "approve", web, "plan-ffffffffffff")
	s.mustFail("refusing to approve "+webSuperseded+": it is superseded, not awaiting approval ("+webAwaiting+" is awaiting approval)",
		nil, "approve", web, webSuperseded)
	s.mustFail("refusing to approve "+webApplied+": it is applied, not awaiting approval", nil, "approve", web, webApplied)
	s.mustFail(`"latest" is not a plan id`, nil, "approve", web, "latest")
	// auto policy, nothing awaiting: the error lists what there is.
	s.mustFail("no plan of Service approve-shop/api is awaiting approval (policy auto); recorded plans: "+apiFailed+" (failed)",
		nil, "approve", "approve-shop/api")
	if v := s.annotation("web", key); v != "" {
		t.Fatalf("refused approvals annotated the Service: %s=%s", key, v)
	}

	// The right id, explicitly.
	out := s.mustRun(nil, "approve", web, webAwaiting)
	for _, want := range []string{
		"Approved " + webAwaiting + " (change, +0 ~1 -0, planned 5m ago) of Service approve-shop/web.",
		"Set " + key + "=" + webAwaiting + " on Service approve-shop/web: the controller applies exactly this saved plan",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("approve output lacks %q:\n%s", want, out)
		}
	}
	if v := s.annotation("web", key); v != webAwaiting {
		t.Fatalf("%s = %q, want %s", key, v, webAwaiting)
	}

	// Without an id: the latest plan awaiting approval (a newer one now).
	newer := *f.web
	newer.Plans = append([]records.Plan{{
		ID: "plan-0d0d0d0d0d0d", Kind: records.KindChange, HCLHash: "d0d0d0d0", Summary: runner.PlanSummary{Add: 1},
		Policy: "manual", Outcome: records.AwaitingApproval, PlannedAt: ago(time.Minute),
	}}, f.web.Plans...)
	newer.Plans[1].Outcome = records.Superseded
	s.save(&newer)
	out = s.mustRun(nil, "approve", "web", "-n", "approve-shop")
	if !strings.Contains(out, "Approved plan-0d0d0d0d0d0d (change, +1 ~0 -0, planned 60s ago)") {
		t.Errorf("approve without id:\n%s", out)
	}
	if v := s.annotation("web", key); v != "plan-0d0d0d0d0d0d" {
		t.Fatalf("%s = %q after approve without id", key, v)
	}

	// The route set: the annotation goes on its record ConfigMap.
	out = s.mustRun(nil, "approve", "routes")
	cmName := "ccm-plans-" + f.routes.Workspace
	if !strings.Contains(out, "on ConfigMap approve-system/"+cmName) {
		t.Errorf("approve routes:\n%s", out)
	}
	cm, err := s.client.CoreV1().ConfigMaps(s.ccmNS).Get(t.Context(), cmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := cm.Annotations[key]; v != routesPlan {
		t.Errorf("record ConfigMap %s = %q, want %s", key, v, routesPlan)
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
	if v := s.annotation("recreated", key); v != "" {
		t.Errorf("stale record approved: %s=%s", key, v)
	}

	// The patch carries the checked Service's uid: a Service replaced
	// between the check and the patch is not annotated.
	c := &cluster{client: s.client, namespace: s.ccmNS}
	replaced := &target{ref: serviceRef(f.webSvc), record: f.web, service: f.webSvc.DeepCopy()}
	replaced.service.UID = "11111111-1111-1111-1111-111111111111"
	if err := c.annotate(t.Context(), replaced, key, webAwaiting); err == nil || !strings.Contains(err.Error(), "replaced) meanwhile") {
		t.Errorf("annotate with another uid: %v", err)
	}
}
