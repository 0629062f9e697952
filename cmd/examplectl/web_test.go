package main

import (
	"strings"
	"testing"
)

// testPageActions: the review page's approve and unlock are examplectl's,
// with its refusals, for a record the page names by workspace.
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
}
