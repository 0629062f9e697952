package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
)

func testUnlock(t *testing.T, s *scope) {
	s.fixtures()
	key := string(annotations.LBForceUnlock)
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
	if v := s.annotation("api", key); v != "" {
		t.Fatalf("unconfirmed unlock annotated the Service: %s=%s", key, v)
	}

	// Confirmed on the terminal.
	out = s.mustRun(typed("yes\n"), "unlock", "api", "-n", "unlock-shop")
	if !strings.Contains(out, "Force-unlock "+apiLockID+"? [y/N]: Set "+key+"="+apiLockID+" on Service unlock-shop/api") {
		t.Errorf("confirmed unlock:\n%s", out)
	}
	if v := s.annotation("api", key); v != apiLockID {
		t.Fatalf("%s = %q, want %s", key, v, apiLockID)
	}

	// --yes: no question.
	if _, err := s.client.CoreV1().Services(s.svcNS).Patch(t.Context(), "api", "application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+key+`":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out = s.mustRun(nil, "unlock", api, "--yes")
	if strings.Contains(out, "[y/N]") || !strings.Contains(out, "Set "+key+"="+apiLockID) {
		t.Errorf("unlock --yes:\n%s", out)
	}
	if v := s.annotation("api", key); v != apiLockID {
		t.Fatalf("%s = %q after --yes, want %s", key, v, apiLockID)
	}

	// No lock recorded.
	s.mustFail("no state lock is recorded for Service unlock-shop/web: nothing to unlock", nil, "unlock", "unlock-shop/web", "--yes")
}
