package main

import (
	"strings"
	"testing"
)

func testReview(t *testing.T, s *scope) {
	_, errOut, err := s.run(nil, "review")
	if err != nil || !strings.Contains(errOut, "No plan is awaiting approval (0 plan records") {
		t.Fatalf("empty queue: %v, %q", err, errOut)
	}
	f := s.fixtures()
	out := s.mustRun(nil, "review")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "PLAN ") {
		t.Fatalf("review:\n%s", out)
	}
	// Newest first: web's plan (5 minutes) after the others (the routes'
	// and the group's are newer).
	var order []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "plan-") {
			order = append(order, strings.Fields(l)[0])
		}
	}
	if len(order) != 3 || order[2] != webAwaiting {
		t.Errorf("queue order %v; want %s last (oldest)", order, webAwaiting)
	}
	web := lines[3]
	for _, want := range []string{f.webSvc.Namespace + "/web", "+0 ~1 -0", alice, "type-change (require-approval)", "1/2 " + bob} {
		if !strings.Contains(web, want) {
			t.Errorf("web's line lacks %q:\n%s", want, web)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, webSuperseded) {
			t.Errorf("a superseded plan is in the queue: %s", l)
		}
	}
	s.mustFail("loopback only", nil, "review", "--web", "--address", "0.0.0.0:0")
}
