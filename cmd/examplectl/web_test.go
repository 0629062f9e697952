package main

import (
	"strings"
	"testing"
	"time"
)

// testPageActions: the review page's approve, unlock and release are
// examplectl's, with its refusals, for a record the page names by
// workspace (and, for a release, the IP the page showed).
func testPageActions(t *testing.T, s *scope) {
	f := s.fixtures()
	o := kubeOptions{kubeconfig: s.reviewer, namespace: s.ccmNS}
	c, err := o.connect()
	if err != nil {
		t.Fatal(err)
	}
	a := &pageActions{c: c}
	ctx := t.Context()
	refused := func(want string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want one saying %q", err, want)
		}
	}

	_, err = a.Approve(ctx, f.web.Workspace, webSuperseded, "")
	refused("it is superseded, not awaiting approval", err)
	_, err = a.Approve(ctx, "demo-service-gone-1a2b3c4d", webAwaiting, "")
	refused("no plan record of workspace demo-service-gone-1a2b3c4d", err)
	_, err = a.Approve(ctx, f.web.Workspace, "../x", "")
	refused(`"../x" is not a plan id`, err)
	if n := len(s.approvals()); n != 0 {
		t.Fatalf("refusals created %d PlanApprovals", n)
	}
	msg, err := a.Approve(ctx, f.web.Workspace, webAwaiting, "from the page")
	if err != nil || !strings.Contains(msg, "Approved "+webAwaiting+" of Service "+s.svcNS+"/web as "+s.user) || !strings.Contains(msg, "Approvals: 2 of 2 required") {
		t.Fatalf("approve: %q, %v", msg, err)
	}
	if pas := s.approvals(); len(pas) != 1 || pas[0].Spec.Approver != s.user || pas[0].Spec.Comment != "from the page" || pas[0].Spec.Object.UID != string(f.webSvc.UID) {
		t.Fatalf("PlanApprovals %+v", pas)
	}

	_, err = a.Unlock(ctx, f.api.Workspace, "another-lock", "")
	refused("the recorded lock is now "+apiLockID+", not another-lock", err)
	_, err = a.Unlock(ctx, f.web.Workspace, apiLockID, "")
	refused("no state lock is recorded", err)
	if n := len(s.unlocks()); n != 0 {
		t.Fatalf("refusals created %d StateUnlocks", n)
	}
	msg, err = a.Unlock(ctx, f.api.Workspace, apiLockID, "")
	if err != nil || !strings.Contains(msg, "forces open lock "+apiLockID) {
		t.Fatalf("unlock: %q, %v", msg, err)
	}
	if us := s.unlocks(); len(us) != 1 || us[0].Spec.Requester != s.user || us[0].Spec.LockID != apiLockID {
		t.Fatalf("StateUnlocks %+v", us)
	}

	s.address("k8s-a-free", freeID, freeIP, "", "", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	s.address("k8s-a-held", heldID, heldIP, "lb-00aa00aa00aa00aa", "Service "+s.svcNS+"/green", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	ws := func(name string) string { return "demo-address-" + s.svcNS + "-" + name }
	_, err = a.Release(ctx, ws("k8s-a-held"), heldIP, "")
	refused("it cannot be released while a load balancer holds it", err)
	_, err = a.Release(ctx, ws("k8s-a-free"), "203.0.113.99", "")
	refused("address "+s.svcNS+"/k8s-a-free is now at "+freeIP+", not 203.0.113.99: look at it again", err)
	_, err = a.Release(ctx, f.web.Workspace, "", "")
	refused("is no reserved address", err)
	if n := len(s.releases()); n != 0 {
		t.Fatalf("refusals created %d AddressReleases", n)
	}
	msg, err = a.Release(ctx, ws("k8s-a-free"), freeIP, "from the page")
	if err != nil || !strings.Contains(msg, "Created AddressRelease "+s.ccmNS+"/release-") || !strings.Contains(msg, "your own approval does not count") {
		t.Fatalf("release: %q, %v", msg, err)
	}
	if rs := s.releases(); len(rs) != 1 || rs[0].Spec.Requester != s.user || rs[0].Spec.Comment != "from the page" || rs[0].Spec.Address.Name != "k8s-a-free" {
		t.Fatalf("AddressReleases %+v", rs)
	}
}
