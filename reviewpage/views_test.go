package reviewpage

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
)

func waitingRecord(ws, name string, at time.Time, outcome records.Outcome) *records.Record {
	return &records.Record{
		Object: objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: name}, Workspace: ws, Policy: "manual",
		Files: map[string]string{"main.tf": mainV2}, AppliedFiles: map[string]string{"main.tf": mainV1},
		Applied: &records.LastApply{PlanID: "plan-000000000001"},
		Plans: []records.Plan{{
			ID: "plan-00000000000" + name[len(name)-1:], Kind: records.KindChange, Outcome: outcome, PlannedAt: at, Policy: "manual",
			Contributors: records.Contributors{Authors: []string{"carol"}},
			Summary: runner.PlanSummary{Add: 1, Remove: 1, Resources: []runner.ResourceChange{
				{Address: "module.load_balancer.example_load_balancer.this", Type: "example_load_balancer", Action: "replace", Reason: "cannot_update"},
			}},
		}},
	}
}

func TestQueueNewestFirst(t *testing.T) {
	now := time.Now()
	all := []*records.Record{
		waitingRecord("ws-a", "web1", now.Add(-time.Hour), records.AwaitingApproval),
		waitingRecord("ws-b", "web2", now, records.AwaitingApproval),
		waitingRecord("ws-c", "web3", now.Add(time.Minute), records.Applied),
	}
	q := Queue(all)
	if len(q) != 2 || q[0].Workspace != "ws-b" || q[1].Workspace != "ws-a" || q[0].Need != 1 {
		t.Errorf("queue = %+v; want ws-b then ws-a, applied plans left out", q)
	}
}

func TestPlanPage(t *testing.T) {
	r := waitingRecord("ws-a", "web1", time.Now(), records.AwaitingApproval)
	p := &r.Plans[0]
	v := newPlanView(r, p, replaceText, "carol", []Event{{Reason: "ApprovalIgnored", Message: `PlanApproval x: "carol" made a change this plan contains and cannot approve it`}})
	if !v.Mine || len(v.Resources) != 1 || strings.Join(v.Resources[0].Forced, ",") != "internal,ip_family" {
		t.Errorf("view: mine %v, resources %+v", v.Mine, v.Resources)
	}
	if len(v.Ignored) != 1 || !strings.Contains(v.DiffNote, "last applied") || len(v.Listeners) != 3 {
		t.Errorf("view: ignored %v, note %q, listeners %v", v.Ignored, v.DiffNote, v.Listeners)
	}
	pg, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := pg.byName["plan"].Execute(&b, Page{Title: "t", User: "carol", Live: true, Data: map[string]any{"View": v}}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`<code class="forced">internal</code>`, `id="approve"`, "You made a change this plan carries",
		`<span class="add">&#43;  internal = true</span>`, `<span class="del">-  internal = false</span>`,
		"<code>tcp/443</code> added", "target_port: 30080 → 30081", "made a change this plan contains",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("plan page lacks %q", want)
		}
	}
	// Every page renders from what its handler passes.
	for name, data := range map[string]any{
		"queue":   map[string]any{"Queue": Queue([]*records.Record{r}), "Locked": []*records.Record{}, "Drifted": []*records.Record{}, "Records": 1},
		"objects": []*records.Record{r, {Workspace: "empty", Object: objectref.Ref{Kind: objectref.KindRouteSet}}},
		"object":  map[string]any{"Record": r, "Trail": []Event{{Type: "Normal", Reason: "Applied", Message: "Applied plan-1"}}},
		"confirm": map[string]any{"Action": "approve", "View": v},
	} {
		b.Reset()
		if err := pg.byName[name].Execute(&b, Page{Title: name, Data: data}); err != nil {
			t.Errorf("page %s: %v", name, err)
		}
	}
	// An apply under way is on the object's page.
	applying := *r
	applying.Applying = &records.ApplyStart{Plan: *v.Plan, Replica: "ccm-1_ab12", StartedAt: time.Now()}
	b.Reset()
	if err := pg.byName["object"].Execute(&b, Page{Title: "object", Data: map[string]any{"Record": &applying}}); err != nil {
		t.Fatalf("object page: %v", err)
	}
	if !strings.Contains(b.String(), `<dd id="applying">`+v.Plan.ID) || !strings.Contains(b.String(), "on ccm-1_ab12") {
		t.Errorf("object page does not show the apply under way:\n%s", b.String())
	}
	// Each confirmation posts its own action and the one plan, lock or
	// address.
	locked := *r
	locked.Lock = &records.LockInfo{ID: "lock-1", Holder: "ccm-0"}
	kept := &Address{ID: "addr-1", IP: "203.0.113.7"}
	for action, want := range map[string][]string{
		"approve": {`action="/approve"`, `name="id" value="` + v.Plan.ID + `"`, `href="/plan?ws=` + r.Workspace + `&amp;id=` + v.Plan.ID + `"`},
		"unlock":  {`action="/unlock"`, `name="lock" value="lock-1"`, `href="/object?ws=` + r.Workspace + `"`, "Force open lock lock-1</button>"},
		"release": {`action="/release"`, `name="ip" value="203.0.113.7"`, `href="/object?ws=` + r.Workspace + `"`, "cannot be undone", "Release 203.0.113.7</button>"},
	} {
		b.Reset()
		if err := pg.byName["confirm"].Execute(&b, Page{Title: action, Form: "f0rm", Data: map[string]any{"Action": action, "View": v, "Record": &locked, "Address": kept}}); err != nil {
			t.Fatalf("confirm %s: %v", action, err)
		}
		for _, w := range append(want, `name="form" value="f0rm"`, `name="ws" value="`+r.Workspace+`"`) {
			if !strings.Contains(b.String(), w) {
				t.Errorf("confirm %s lacks %s:\n%s", action, w, b.String())
			}
		}
	}
}

// An address's page shows it, and offers its release only while nothing
// holds it and no plan of it waits.
func TestAddressPage(t *testing.T) {
	pg, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	outputs := func(kv ...string) map[string]json.RawMessage {
		out := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]], _ = json.Marshal(kv[i+1])
		}
		return out
	}
	rec := &records.Record{Workspace: "prod-address-shop-k8s-a-1", Object: objectref.Address("shop", "k8s-a-1"),
		Applied: &records.LastApply{Outputs: outputs("id", "addr-1", "ip", "203.0.113.7", "load_balancer_id", "lb-1", "holder", "Service shop/web")}}
	if a := addressOf(rec); a == nil || a.IP != "203.0.113.7" || a.Holder != "Service shop/web (lb-1)" {
		t.Fatalf("addressOf = %+v", a)
	}
	if a := addressOf(&records.Record{Object: objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: "web"}}); a != nil {
		t.Fatalf("a Service's record is an address: %+v", a)
	}
	page := func(rec *records.Record) string {
		var b bytes.Buffer
		if err := pg.byName["object"].Execute(&b, Page{Title: "object", Data: map[string]any{"Record": rec, "Address": addressOf(rec)}}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if html := page(rec); !strings.Contains(html, "Service shop/web (lb-1)") || strings.Contains(html, `id="release"`) {
		t.Errorf("held: the page offers its release, or does not say who holds it:\n%s", html)
	}
	rec.Applied.Outputs = outputs("id", "addr-1", "ip", "203.0.113.7")
	if html := page(rec); !strings.Contains(html, `href="/confirm?action=release&amp;ws=prod-address-shop-k8s-a-1"`) || !strings.Contains(html, "nothing (reserved, detached)") {
		t.Errorf("detached: the page does not offer its release:\n%s", html)
	}
	rec.Plans = []records.Plan{{ID: "plan-0000000000aa", Kind: records.KindDestroy, Outcome: records.AwaitingApproval}}
	if html := page(rec); strings.Contains(html, `id="release"`) || !strings.Contains(html, "Its destroy plan") || !strings.Contains(html, "plan-0000000000aa</a> awaits approval") {
		t.Errorf("its release waiting: the page offers it again, or does not say what waits:\n%s", html)
	}
}
