package main

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
)

// clear clears the screen, prints what a reviewer hopes to read, lets the
// rest of the line overwrite it and reverses what follows (CSI as one C1
// character last); shown is how examplectl prints it.
const (
	clear = "\x1b[2J\x1b[HNo changes.\r\u202e\u009b"
	shown = `\x1b[2J\x1b[HNo changes.\r\u202e\u009b`
)

// testHostile: whatever the texts of a record hold - a plan text stored
// before the store escaped texts (or edited since), names, comments,
// messages, a lock - examplectl prints them inert, the plan text keeping
// its lines, in every output: tables, fields, JSON.
func testHostile(t *testing.T, s *scope) {
	ctx := t.Context()
	svc := s.service("web")
	const id = "plan-5a5a5a5a5a5a"
	files := map[string]string{"main.tf": "# web\n"}
	rec := &records.Record{
		Object: serviceRef(svc), Workspace: "demo-service-" + s.svcNS + "-web-5a5a5a5a", Policy: "manual",
		Files: files,
		Plans: []records.Plan{{
			ID: id, Kind: records.KindChange, HCLHash: filesHash(files), Summary: runner.PlanSummary{Add: 1},
			Policy: "manual", Outcome: records.AwaitingApproval, PlannedAt: ago(time.Minute),
			Text:   "stored escaped",
			Author: "mallory" + clear,
			Error:  "Error: " + clear,
			Verdicts: []records.Verdict{{
				Rule: "type-change" + clear, Effect: "require-approval", Message: "changes " + clear,
			}},
			Approvals: []records.Approval{{By: "eve" + clear, At: ago(time.Minute), Object: id + "-x1", Comment: "LGTM " + clear}},
		}},
		Lock: &records.LockInfo{ID: "lock" + clear, Holder: "terraform@" + clear, Created: ago(time.Hour), SeenAt: ago(time.Minute)},
	}
	s.save(rec)

	// The plan text as terraform wrote it, raw in its ConfigMap.
	text := "Terraform will perform the following actions:\n\n\t" + clear + "\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n"
	cm, err := s.client.CoreV1().ConfigMaps(s.ccmNS).Get(ctx, records.TextName(rec.Workspace), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte(text))
	_ = w.Close()
	cm.BinaryData[id+".txt.gz"] = gz.Bytes()
	if _, err := s.client.CoreV1().ConfigMaps(s.ccmNS).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.store.PlanText(ctx, rec.Workspace, id); err != nil || got != text {
		t.Fatalf("the raw plan text did not reach the record: %q, %v", got, err)
	}

	outputs := map[string]string{}
	for _, args := range [][]string{
		{"plan", s.svcNS + "/web"},
		{"history", s.svcNS + "/web"},
		{"history", s.svcNS + "/web", "-o", "json"},
		{"status"},
		{"status", "-o", "wide"},
		{"status", "-o", "json"},
	} {
		outputs[strings.Join(args, " ")] = s.mustRun(nil, args...)
	}
	// unlock shows the lock, then refuses without a terminal.
	out, _, err := s.run(nil, "unlock", s.svcNS+"/web")
	if err == nil || !strings.Contains(err.Error(), "stdin is not a terminal") {
		t.Errorf("unlock without a terminal: %v", err)
	}
	outputs["unlock"] = out
	for cmd, out := range outputs {
		if strings.ContainsAny(out, "\x1b\r\u202e\u009b") {
			t.Errorf("examplectl %s prints a control character raw:\n%q", cmd, out)
		}
	}

	plan := outputs["plan "+s.svcNS+"/web"]
	for _, want := range []string{
		// The plan text keeps its lines and tabs.
		"=== terraform plan " + id + "\nTerraform will perform the following actions:\n\n\t" + shown + "\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n",
		"author:       mallory" + shown + "\n",
		"                eve" + shown + " at ",
		": LGTM " + shown + "\n",
		"verdicts:     type-change" + shown + " (require-approval): changes " + shown + "\n",
		"error:        Error: " + shown + "\n",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	if !strings.Contains(outputs["unlock"], "id:        lock"+shown) || !strings.Contains(outputs["unlock"], "holder:    terraform@"+shown) {
		t.Errorf("unlock:\n%s", outputs["unlock"])
	}
	// JSON: the same values, as JSON escapes.
	if js := outputs["history "+s.svcNS+"/web -o json"]; !strings.Contains(js, `"author": "mallory\u001b[2J\u001b[HNo changes.\r\u202e\u009b"`) {
		t.Errorf("history -o json:\n%s", js)
	}
}
