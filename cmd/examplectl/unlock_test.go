package main

import (
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/reviewapi"
)

func testUnlock(t *testing.T, s *scope) {
	f := s.fixtures()
	api := "unlock-shop/api"

	// No terminal, no --yes: refused after showing the lock.
	out, _, err := s.run(nil, "unlock", api)
	if err == nil || !strings.Contains(err.Error(), "stdin is not a terminal (pass --yes)") {
		t.Fatalf("unlock without a terminal: %v", err)
	}
	golden(t, "unlock.golden", out)
	// A terminal, but not confirmed.
	for _, answer := range []string{"n\n", "\n", ""} {
		s.mustFail("not confirmed: nothing changed", typed(answer), "unlock", api)
	}
	if u := s.unlocks(); len(u) != 0 {
		t.Fatalf("unconfirmed unlocks created %d StateUnlocks", len(u))
	}

	// Confirmed on the terminal: a StateUnlock as the caller, naming the
	// lock and the Service by its uid.
	out = s.mustRun(typed("yes\n"), "unlock", "api", "-n", "unlock-shop")
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
	out = s.mustRun(nil, "unlock", api, "--yes", "--comment", "holder pod is gone")
	if strings.Contains(out, "[y/N]") || !strings.Contains(out, "Created StateUnlock unlock-system/unlock-") {
		t.Errorf("unlock --yes:\n%s", out)
	}
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
