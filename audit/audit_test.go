package audit_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/audit"
)

// lines reads a log back, failing on any line that is not one entry.
func lines(t *testing.T, path string) []audit.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e audit.Entry
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || dec.More() {
			t.Fatalf("line %d is not one entry (%v): %.200q", len(out)+1, err, sc.Text())
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWriteAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	first := audit.Entry{
		Time: at, Action: audit.ActionApply, Object: "Service default/web", Workspace: "prod-service-default-web-1a2b3c4d",
		PlanID: "plan-a1b2c3d4e5f6", Policy: "auto", Outcome: "applied", Summary: "+1 ~0 -0", Actor: "example-cloud-controller-manager",
		Details: map[string]string{"loadBalancer": "lb-0f3c9a1e"},
	}
	l, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(first); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(first); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Write after Close = %v; want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	// Reopening appends.
	l, err = audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := l.Write(audit.Entry{Action: audit.ActionDrift, Object: "RouteSet cluster"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got := lines(t, path)
	if len(got) != 2 {
		t.Fatalf("%d lines after reopening; want 2", len(got))
	}
	want := first
	want.Time = at.UTC()
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("line 1 = %+v\nwant %+v", got[0], want)
	}
	if got[1].Action != "drift" || got[1].Time.Before(before.Add(-time.Second)) || got[1].Time.Location() != time.UTC {
		t.Errorf("line 2 = %+v; want a drift entry stamped now, UTC", got[1])
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), `"error"`) || strings.Contains(string(raw), `"details":{}`) {
		t.Errorf("empty fields written: %s", raw)
	}
}

// TestConcurrent: lines of concurrent writers, through one Log or two
// (two processes appending), never interleave.
func TestConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	logs := make([]*audit.Log, 2)
	for i := range logs {
		l, err := audit.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		logs[i] = l
	}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for g := range writers {
		l := logs[g%2]
		wg.Go(func() {
			for i := range each {
				// Lines of 4-12 KiB: past a pipe's atomic 4 KiB.
				big := strings.Repeat(fmt.Sprintf("%d-%d ", g, i), 1000+g*300)
				e := audit.Entry{Action: audit.ActionPlan, Object: fmt.Sprintf("Service ns/svc-%d", g), PlanID: fmt.Sprint(i), Details: map[string]string{"big": big}}
				if err := l.Write(e); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := lines(t, path)
	if len(got) != writers*each {
		t.Fatalf("%d lines; want %d", len(got), writers*each)
	}
	next := map[string]int{}
	for _, e := range got {
		if e.PlanID != fmt.Sprint(next[e.Object]) {
			t.Fatalf("%s: entry %s after %d", e.Object, e.PlanID, next[e.Object]-1)
		}
		next[e.Object]++
	}
}

func TestRedact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	token := `tok-3f9a"c2\b/1 +x`
	password := "hunter22"
	l, err := audit.Open(path, audit.Redact(token, "", password))
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(token)
	e := audit.Entry{
		Action: "apply", Object: "Service default/" + password, Workspace: "w-" + password, PlanID: password, Policy: password,
		Outcome: password, Summary: password, Actor: "user:" + password,
		Error:   fmt.Sprintf("POST https://api.example.cloud/v1?token=%s: 401 {\"token\":%s} header %s", url.QueryEscape(token), quoted, token),
		Details: map[string]string{password: "key", "value": password + password, "path": "/v1/" + url.PathEscape(token)},
	}
	if err := l.Write(e); err != nil {
		t.Fatal(err)
	}
	// A value added later (a rotated token) is redacted from then on.
	l.Redact("rotated-token-7c1e")
	if err := l.Write(audit.Entry{Action: "apply", Object: "Service default/web", Error: "bad token rotated-token-7c1e"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	raw, _ := os.ReadFile(path)
	for _, secret := range []string{"tok-3f9a", password, url.QueryEscape(token), "rotated-token-7c1e"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("log holds %q:\n%s", secret, raw)
		}
	}
	got := lines(t, path)
	if got[0].PlanID != audit.Redacted || got[0].Object != "Service default/"+audit.Redacted ||
		got[0].Details[audit.Redacted] != "key" || got[0].Details["value"] != audit.Redacted+audit.Redacted ||
		got[1].Error != "bad token "+audit.Redacted {
		t.Errorf("entries = %+v", got)
	}
	if e.PlanID != password || e.Details["value"] != password+password {
		t.Error("Write changed the caller's entry")
	}
}

func TestStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	t.Cleanup(func() { os.Stdout = stdout })
	for _, path := range []string{"", "-"} {
		l, err := audit.Open(path, audit.Redact("s3cret"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Write(audit.Entry{Action: "force-unlock", Object: "Service a/b", Details: map[string]string{"lock": "s3cret"}}); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Close left stdout open.
	if _, err := fmt.Fprintln(os.Stdout, "still open"); err != nil {
		t.Errorf("Close closed stdout: %v", err)
	}
	w.Close()
	out, _ := io.ReadAll(r)
	if n := strings.Count(string(out), `{"lock":"[redacted]"}}`+"\n"); n != 2 {
		t.Errorf("stdout = %q", out)
	}
}

func TestErrors(t *testing.T) {
	if _, err := audit.Open(filepath.Join(t.TempDir(), "missing", "audit.log")); err == nil {
		t.Error("Open in a missing directory succeeded")
	}
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(audit.Entry{Object: "Service a/b"}); err == nil {
		t.Error("an entry without action was written")
	}
}

// A PostgreSQL password with quotes, backslashes and URL syntax, quoted
// into an error the way terraform and Go print it, leaves no trace; nor
// does the password of a connection URL nobody registered.
func TestRedactEscapedForms(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	pw := `p"w\d@:/% ü`
	conn := (&url.URL{Scheme: "postgres", User: url.UserPassword("ccm", pw), Host: "db:5432", Path: "/x"}).String()
	l, err := audit.Open(path, audit.Redact(conn))
	if err != nil {
		t.Fatal(err)
	}
	e := audit.Entry{Action: "apply", Object: "Service default/web",
		Error:   fmt.Sprintf("init: parse %q: invalid; connecting with %q; dial postgres://admin:other-secret@db2/x", "postgres://ccm:"+pw+"@db:5432/x", pw),
		Details: map[string]string{"hcl": `conn = "p\"w\\d@:/% ü"`}}
	if err := l.Write(e); err != nil {
		t.Fatal(err)
	}
	l.Close()
	raw, _ := os.ReadFile(path)
	q, _ := json.Marshal(pw)
	for _, leak := range []string{"w\\\\d", `p\"w`, string(q[1 : len(q)-1]), url.QueryEscape(pw), "other-secret"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("log holds %q:\n%s", leak, raw)
		}
	}
	if !strings.Contains(string(raw), "dial postgres://admin:[redacted]@db2/x") {
		t.Errorf("unregistered URL password not redacted:\n%s", raw)
	}
}

// A line shows no control character a terminal acts on, and decodes to
// the values written (a rule message or an error quoting what a tenant
// wrote).
func TestLinesAreInert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	hostile := "evil\x1b[2J\x1b[H\u009bNo changes.\u202e\x7f"
	e := audit.Entry{Action: audit.ActionApply, Object: "Service a/b", Error: hostile, Details: map[string]string{"reason": hostile}}
	if err := l.Write(e); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(strings.TrimSuffix(string(data), "\n"), "\x1b\u009b\u202e\x7f\n\r") {
		t.Fatalf("raw control characters in the line: %q", data)
	}
	got := lines(t, path)
	if len(got) != 1 || got[0].Error != hostile || got[0].Details["reason"] != hostile {
		t.Fatalf("decoded %+v, want the values written", got)
	}
}
