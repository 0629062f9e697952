package main

import (
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/reviewapi"
)

func testUnlock(t *testing.T, s *scope) {
	f := s.fixtures()
	api := "unlock-shop/api"

	// No terminal, no --yes: refused after showing the lock; not
	// confirmed: nothing created.
	s.asksFirst("unlock.golden", "refusing to force-unlock", func() int { return len(s.unlocks()) }, "unlock", api)

	// Confirmed on the terminal: a StateUnlock as the caller, naming the
	// lock and the Service by its uid.
	out := s.mustRun(typed("yes\n"), "unlock", "api", "-n", "unlock-shop")
	if want := "Force-unlock " + apiLockID + "? [y/N]: Created StateUnlock unlock-system/unlock-"; !strings.Contains(out, want) ||
		!strings.Contains(out, " as "+s.user+": the controller forces open lock "+apiLockID+" of Service unlock-shop/api on its next run, once, and only that lock.") {
		t.Errorf("confirmed unlock:\n%s", out)
	}
	created := s.unlocks()
	want := reviewapi.StateUnlockSpec{Object: serviceRef(f.apiSvc), LockID: apiLockID, Requester: s.user}
	if len(created) != 1 || created[0].Spec != want {
		t.Fatalf("StateUnlocks = %+v; want one with %+v", created, want)
	}

	// --yes: no question.
	s.yesSkipsTheQuestion("Created StateUnlock unlock-system/unlock-", "unlock", api, "--comment", "holder pod is gone")
	want.Comment = "holder pod is gone"
	if u := s.unlocks(); len(u) != 2 || !(u[0].Spec == want || u[1].Spec == want) {
		t.Errorf("StateUnlocks after --yes = %+v; want one with %+v", u, want)
	}

	// No lock recorded.
	s.mustFail("no state lock is recorded for Service unlock-shop/web: nothing to unlock", nil, "unlock", "unlock-shop/web", "--yes")
	if u := s.unlocks(); len(u) != 2 {
		t.Errorf("%d StateUnlocks; want 2", len(u))
	}
}
