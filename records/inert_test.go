package records_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/records"
)

// hostile clears the screen, says what a reviewer hopes to read,
// overwrites its line and reverses what follows.
const hostile = "\x1b[2J\x1b[HNo changes.\revil\u202eyned\u009b"

// inertHostile is hostile as stored: every control visible.
const inertHostile = `\x1b[2J\x1b[HNo changes.\revil\u202eyned\u009b`

// testInert: the texts kept for people are stored with their control
// characters escaped, so that whoever reads them - examplectl, or kubectl
// get configmap -o yaml - sees them inert; identifiers are kept; the
// caller's record is not written through; storing the same texts again
// writes nothing.
func testInert(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 0)
	ws := "inert-1a2b3c4d"
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	p := newPlan("plan-0e0e0e0e0e0e", "Plan: 1 to add.\n\t"+hostile+"\n", at)
	p.Error = "Error: port " + hostile + "\n\nsecond line"
	p.Author = "mallory"
	p.Verdicts = []records.Verdict{{Rule: "type-change", Effect: "require-approval", Message: "changes " + hostile}}
	p.Approvals = []records.Approval{{By: "bob", At: at, Object: "plan-0e0e0e0e0e0e-x1", Comment: "LGTM\n" + hostile}}
	lock := &records.LockInfo{ID: "lock-1", Holder: "terraform@" + hostile + "\nhost", SeenAt: at}
	set := func(r *records.Record) error {
		r.Plans = []records.Plan{p}
		r.Lock = lock
		return nil
	}
	got := mustUpdate(t, s, ws, set)

	check := func(what string, r *records.Record) {
		t.Helper()
		q := r.Plans[0]
		for _, c := range []struct{ field, got, want string }{
			{"error", q.Error, "Error: port " + inertHostile + "\n\nsecond line"},
			{"verdict message", q.Verdicts[0].Message, "changes " + inertHostile},
			{"comment", q.Approvals[0].Comment, "LGTM\n" + inertHostile},
			{"lock holder", r.Lock.Holder, `terraform@` + inertHostile + `\nhost`},
		} {
			if c.got != c.want {
				t.Errorf("%s: %s = %q; want %q", what, c.field, c.got, c.want)
			}
		}
	}
	check("Update", got)
	rec, err := s.Get(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	check("Get", rec)
	text, err := s.PlanText(ctx, ws, p.ID)
	if want := "Plan: 1 to add.\n\t" + inertHostile + "\n"; err != nil || text != want {
		t.Errorf("PlanText = %q, %v; want %q", text, err, want)
	}

	// What kubectl shows: the ConfigMaps' values, and every string of
	// record.json as its reader decodes it.
	cms, texts, _ := objects(t, client, ws)
	var raw []string
	for _, cm := range cms {
		for k, v := range cm.Data {
			raw = append(raw, v)
			var doc any
			if k == records.RecordKey && json.Unmarshal([]byte(v), &doc) == nil {
				raw = append(raw, jsonStrings(doc)...)
			}
		}
	}
	for _, cm := range texts {
		for _, v := range cm.BinaryData {
			raw = append(raw, gunzip(t, v))
		}
	}
	if !slices.Contains(raw, "Plan: 1 to add.\n\t"+inertHostile+"\n") || !slices.Contains(raw, "changes "+inertHostile) {
		t.Fatalf("the record's ConfigMaps lack the plan text or record.json: %q", raw)
	}
	for _, v := range raw {
		if strings.ContainsAny(v, "\x1b\r\u202e\u009b") {
			t.Errorf("a ConfigMap holds a raw control: %q", v)
		}
	}

	// The caller's values are not written through.
	if p.Verdicts[0].Message != "changes "+hostile || p.Approvals[0].Comment != "LGTM\n"+hostile || lock.Holder != "terraform@"+hostile+"\nhost" {
		t.Errorf("Update changed the caller's record: %+v %+v", p, lock)
	}

	// Storing the same texts again is no change: nothing is written.
	before := indexVersion(t, client, ws)
	mustUpdate(t, s, ws, set)
	if after := indexVersion(t, client, ws); after != before {
		t.Errorf("storing the same hostile texts again rewrote the record (resourceVersion %s -> %s)", before, after)
	}

	// Identifiers are compared, not only read (an approver with the
	// approvers the API server authenticates, a lock id with what a
	// StateUnlock names): kept as they are, escaped by whoever prints them.
	rec = mustUpdate(t, s, ws, func(r *records.Record) error {
		r.Plans[0].Author, r.Plans[0].Approvals[0].By, r.Lock.ID = "mallory\u202e", "bob\x1b", "lock\r1"
		return nil
	})
	if q := rec.Plans[0]; q.Author != "mallory\u202e" || q.Approvals[0].By != "bob\x1b" || rec.Lock.ID != "lock\r1" {
		t.Errorf("identifiers changed: author %q, approver %q, lock %q", q.Author, q.Approvals[0].By, rec.Lock.ID)
	}
}

// jsonStrings are the strings of a decoded JSON document, keys included.
func jsonStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, jsonStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(append(out, k), jsonStrings(e)...)
		}
		return out
	}
	return nil
}

func indexVersion(t *testing.T, client kubernetes.Interface, ws string) string {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), records.IndexName(ws), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.ResourceVersion
}
