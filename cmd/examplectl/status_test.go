package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func testStatus(t *testing.T, s *scope) {
	// No records yet: a note on stderr, nothing on stdout.
	out, errOut, err := s.run(nil, "status")
	if err != nil || out != "" || !strings.Contains(errOut, "No plan records in namespace status-system.") {
		t.Fatalf("empty status: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	s.fixtures()
	golden(t, "status.golden", s.mustRun(nil, "status"))

	var items []statusItem
	if err := json.Unmarshal([]byte(s.mustRun(nil, "status", "-o", "json")), &items); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		line := objectColumn(it.Object) + " " + it.Policy
		if it.LastPlan != nil {
			line += " " + it.LastPlan.ID + " " + string(it.LastPlan.Outcome)
		}
		if it.Lock != nil {
			line += " lock " + it.Lock.ID
		}
		got = append(got, line)
	}
	want := []string{
		"routes manual " + routesPlan + " awaiting-approval",
		"status-shop/api auto " + apiFailed + " failed lock " + apiLockID,
		"status-shop/web manual " + webAwaiting + " awaiting-approval",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("status -o json:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	s.mustFail(`unknown output format "yaml"`, nil, "status", "-o", "yaml")
}
