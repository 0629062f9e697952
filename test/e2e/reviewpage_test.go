package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// TestReviewPage is issue 35 in a real browser: examplectl review --web
// (the real binary, each user's own kubeconfig) in headless Chromium. The
// author of a change that replaces a load balancer sees the plan, and
// their approval is refused with the page's own message; a reviewer sees
// the replacement with the attribute forcing it and the HCL diff, approves
// it, and the load balancer is replaced while the page follows. Requests
// without the token or from another origin are refused.
func TestReviewPage(t *testing.T) {
	testsize.SkipShort(t, "the review page in Chromium")
	t.Parallel()
	e, carol, alice := newAuthoredEnv(t)
	b := newBrowser(t)

	svc := e.createService(t, carol, lbServiceIn("team-a", "web", 80))
	first := e.awaitingPlanIn("team-a", "web")
	testkit.Must(t, e.approveAs(t, alice, svc, first, alice.name))
	e.waitIngressIn("team-a", "web", 60*time.Second)
	before := e.onlyLB(t)

	// Carol makes it internal: a replacement, which waits for review.
	services := carol.kube.CoreV1().Services("team-a")
	svc, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
	testkit.Must(t, err)
	svc.Annotations[string(annotations.LBInternal)] = "true"
	_, err = services.Update(testkit.Context(t), svc, metav1.UpdateOptions{})
	testkit.Must(t, err)
	id := e.awaitingPlanIn("team-a", "web", first)

	t.Run("the author's approval is refused", func(t *testing.T) {
		page := e.startReviewPage(t, carol)
		tab := b.tab(t)
		do(t, tab, "open the queue", chromedp.Navigate(page.url), chromedp.WaitVisible(chromedp.CSS(`a[href*="`+id+`"]`)))
		do(t, tab, "open the plan", chromedp.Click(chromedp.CSS(`a[href*="`+id+`"]`)), chromedp.WaitVisible(chromedp.ID("approve")))
		if s := text(t, tab, "main"); !strings.Contains(s, "You made a change this plan carries") {
			t.Errorf("the plan page does not warn its author:\n%s", s)
		}
		do(t, tab, "approve", chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("confirm")),
			chromedp.Click(chromedp.ID("confirm")), chromedp.WaitVisible(chromedp.CSS(".note.refused")))
		if s := text(t, tab, ".note.refused"); !strings.Contains(s, "Not approved") || !strings.Contains(s, "made a change it plans") {
			t.Errorf("refusal = %q; want the page's own words", s)
		}
		screenshot(t, tab, "review-page-refused.png")
		if p := e.recordOf(t, "team-a", "web").Find(id); p == nil || p.Outcome != records.AwaitingApproval || len(p.Approvals) != 0 {
			t.Fatalf("after the author's try the plan is %+v; want it pending, unapproved", p)
		}
		pas, err := reviewapi.ListPlanApprovals(testkit.Context(t), e.adminDyn(t), namespace)
		testkit.Must(t, err)
		for _, pa := range pas {
			if pa.Spec.Approver == carol.name {
				t.Errorf("a PlanApproval by the author was created: %s", pa.Name)
			}
		}
	})

	t.Run("a reviewer approves the replacement", func(t *testing.T) {
		page := e.startReviewPage(t, alice)
		tab := b.tab(t)
		do(t, tab, "open the queue", chromedp.Navigate(page.url), chromedp.WaitVisible(chromedp.CSS(`a[href*="`+id+`"]`)))
		if s := text(t, tab, "table.list"); !strings.Contains(s, "Service team-a/web") || !strings.Contains(s, carol.name) || !strings.Contains(s, "1 replaced") {
			t.Errorf("the queue's row lacks the object, author or replacement:\n%s", s)
		}
		screenshot(t, tab, "review-page-queue.png")
		do(t, tab, "open the plan", chromedp.Click(chromedp.CSS(`a[href*="`+id+`"]`)), chromedp.WaitVisible(chromedp.ID("hcl-diff")))
		if s := text(t, tab, "#resource-changes"); !strings.Contains(s, "example_load_balancer.this") || !strings.Contains(s, "replace") || !strings.Contains(s, "forced by internal") {
			t.Errorf("resource changes lack the replacement forced by internal:\n%s", s)
		}
		if s := text(t, tab, "#hcl-diff"); !strings.Contains(s, "+++ planned/main.tf") || !hasLine(s, "+", "internal", "true") || !hasLine(s, "-", "internal", "false") {
			t.Errorf("the HCL diff is not against the applied rendering:\n%s", s)
		}
		screenshot(t, tab, "review-page-plan.png")
		do(t, tab, "approve", chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("confirm")))
		if s := text(t, tab, "#confirm-changes"); !strings.Contains(s, "1 replaced") {
			t.Errorf("the confirmation does not say what the plan changes: %q", s)
		}
		if s := text(t, tab, "h1"); !strings.Contains(s, id) {
			t.Errorf("the confirmation does not name the plan: %q", s)
		}
		do(t, tab, "confirm", chromedp.Click(chromedp.ID("confirm")), chromedp.WaitVisible(chromedp.CSS(".note.done")))
		// The page follows the controller: the plan turns applied without a reload.
		testkit.Eventually(t, 2*time.Minute, "the page shows the plan applied", func() error {
			s, err := textOf(tab, "#outcome")
			if err != nil {
				return err
			}
			if s != string(records.Applied) {
				return fmt.Errorf("outcome %q", s)
			}
			return nil
		})
		after := e.onlyLB(t)
		if after.ID == before.ID || !after.Internal {
			t.Errorf("load balancer %s (internal %v) after approval; want a new, internal one replacing %s", after.ID, after.Internal, before.ID)
		}
	})

	t.Run("only the token's holder, only from the page's origin", func(t *testing.T) {
		page := e.startReviewPage(t, alice)
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		status := func(req *http.Request) int {
			t.Helper()
			resp, err := noRedirect.Do(req)
			testkit.Must(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		get, _ := http.NewRequest(http.MethodGet, page.base+"/", nil)
		if s := status(get); s != http.StatusForbidden {
			t.Errorf("GET without the token: %d; want 403", s)
		}
		wrong, _ := http.NewRequest(http.MethodGet, page.base+"/?token=0123", nil)
		if s := status(wrong); s != http.StatusForbidden {
			t.Errorf("GET with a wrong token: %d; want 403", s)
		}
		withToken, _ := http.NewRequest(http.MethodGet, page.url, nil)
		resp, err := noRedirect.Do(withToken)
		testkit.Must(t, err)
		resp.Body.Close()
		cookies := resp.Cookies()
		if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
			t.Fatalf("GET with the token: %d, cookies %v; want a redirect setting a strict HttpOnly cookie", resp.StatusCode, cookies)
		}
		form := url.Values{"ws": {"x"}, "id": {id}}
		post := func(origin, site string) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, page.base+"/approve", strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Origin", origin)
			if site != "" {
				r.Header.Set("Sec-Fetch-Site", site)
			}
			r.AddCookie(cookies[0])
			return r
		}
		if s := status(post("http://evil.example", "cross-site")); s != http.StatusForbidden {
			t.Errorf("POST from another origin (a browser's headers): %d; want 403", s)
		}
		if s := status(post("http://evil.example", "")); s != http.StatusForbidden {
			t.Errorf("POST from another origin (Origin only): %d; want 403", s)
		}
		if s := status(post(page.base, "same-origin")); s != http.StatusForbidden {
			t.Errorf("POST without the form's token: %d; want 403", s)
		}
		rebound, _ := http.NewRequest(http.MethodGet, page.url, nil)
		rebound.Host = "attacker.example"
		if s := status(rebound); s != http.StatusForbidden {
			t.Errorf("GET under another host name (DNS rebinding): %d; want 403", s)
		}
	})
}

// hasLine says whether the diff has a line starting with sign holding the
// words in order.
func hasLine(diff, sign string, words ...string) bool {
	for line := range strings.Lines(diff) {
		if !strings.HasPrefix(line, sign) {
			continue
		}
		rest, ok := line[len(sign):], true
		for _, w := range words {
			i := strings.Index(rest, w)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(w):]
		}
		if ok {
			return true
		}
	}
	return false
}

// onlyLB is the cloud's one load balancer.
func (e *env) onlyLB(t testing.TB) exampleapi.LoadBalancer {
	t.Helper()
	lbs, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	if len(lbs) != 1 {
		t.Fatalf("%d load balancers; want 1", len(lbs))
	}
	return lbs[0]
}
