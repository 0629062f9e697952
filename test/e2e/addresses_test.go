package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/tenancy"
)

// TestReservedAddresses is issue 34's lifecycle on the real binary: an
// address kept when its Service goes comes back, the same IP, to a later
// Service naming it; two Services switch it in one approved plan of the
// address's own workspace; the namespace's cap refuses the next
// reservation with an event, until a reviewer's release of a kept
// address, approved by another, frees it. (The tenant boundary's row is
// in TestTenancy.)
func TestReservedAddresses(t *testing.T) {
	testsize.SkipShort(t, "addresses kept, moved and taken back, each move a plan")
	t.Parallel()
	e := newEnv(t, options{addresses: map[string]any{"maxPerNamespace": 2}})
	e.nodeA()
	e.namespace(t, "shop")
	rita := e.reviewer(t, "rita")
	services := e.kube.CoreV1().Services("shop")
	keep := map[string]string{string(annotations.LBAddressKeep): "true"}

	// Kept: reserved for the Service, attached to its load balancer, and
	// still reserved (detached) after the Service and its load balancer go.
	first := shopService("first", keep)
	_, err := services.Create(testkit.Context(t), first, metav1.CreateOptions{})
	testkit.Must(t, err)
	ip := e.waitIngressIn("shop", "first", 90*time.Second).Status.LoadBalancer.Ingress[0].IP
	addr := e.addressOf(t, ip)
	if addr.Tags[exampleapi.TagNamespace] != "shop" || addr.LoadBalancerID == "" {
		t.Fatalf("address %s: tags %v, load balancer %q", addr.ID, addr.Tags, addr.LoadBalancerID)
	}
	testkit.Must(t, services.Delete(testkit.Context(t), "first", metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, "first", services.Get)
	if n := e.lbCount(); n != 0 {
		t.Fatalf("%d load balancers after the Service went", n)
	}
	if a := e.addressOf(t, ip); a.ID != addr.ID || a.LoadBalancerID != "" {
		t.Fatalf("after the Service went: address %s on %q, want %s detached", a.ID, a.LoadBalancerID, addr.ID)
	}
	e.addressListed(t, rita, addr, "-")

	// A later Service naming it by IP (spec.loadBalancerIP) gets it back.
	second := shopService("second", nil)
	second.Spec.LoadBalancerIP = ip
	_, err = services.Create(testkit.Context(t), second, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.waitIngressIP("shop", "second", ip)
	secondLB := e.addressOf(t, ip).LoadBalancerID

	// Blue/green: green names it by id while second holds it, and waits.
	// Its owner asks for manual review: its load balancer, then the move
	// of the address, each wait for a reviewer.
	green := shopService("green", map[string]string{
		string(annotations.LBAddress):     addr.ID,
		string(annotations.LBApplyPolicy): string(annotations.ApplyManual),
	})
	green, err = services.Create(testkit.Context(t), green, metav1.CreateOptions{})
	testkit.Must(t, err)
	own := e.awaitingPlanIn("shop", "green")
	testkit.Must(t, e.approveAs(t, rita, green, own, rita.name))
	e.eventWith(t, "shop", "green", "AddressHeld", "is held by Service shop/second")
	if a := e.addressOf(t, ip); a.LoadBalancerID != secondLB {
		t.Fatalf("the address moved while second held it: on %q", a.LoadBalancerID)
	}

	// second lets go: the address's workspace plans the move, one change,
	// and waits; the address stays on second's load balancer until then.
	testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := services.Get(testkit.Context(t), "second", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.LoadBalancerIP = ""
		_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		return err
	}))
	move := e.awaitingPlanIn("shop", "green", own)
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if a := e.addressOf(t, ip); a.LoadBalancerID != secondLB {
			return fmt.Errorf("the address moved before its plan was approved: on %q", a.LoadBalancerID)
		}
		return nil
	})
	// The reviewer approves it by the address's name; its history lists it.
	e.examplectl(t, rita, "approve", "address:shop/"+addr.Name, move)
	e.waitIngressIP("shop", "green", ip)
	if out := e.examplectl(t, rita, "history", "address:shop/"+addr.Name); !strings.Contains(out, move) {
		t.Fatalf("examplectl history of the address lacks %s:\n%s", move, out)
	}
	greenLB := e.addressOf(t, ip).LoadBalancerID
	if greenLB == secondLB || greenLB == "" {
		t.Fatalf("after the move the address is on %q (second's: %s)", greenLB, secondLB)
	}
	e.eventWith(t, "shop", "green", "Applied", move)
	e.addressListed(t, rita, addr, "Service shop/green ("+greenLB+")")
	// second shows its load balancer's own, new address.
	testkit.Eventually(t, 60*time.Second, "second's new address", func() error {
		svc, err := services.Get(testkit.Context(t), "second", metav1.GetOptions{})
		if err != nil {
			return err
		}
		lb, err := e.api.GetLoadBalancer(testkit.Context(t), secondLB)
		if err != nil {
			return err
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) == 0 || ing[0].IP == ip || ing[0].IP != lb.IPv4 {
			return fmt.Errorf("second shows %v, its load balancer has %s", ing, lb.IPv4)
		}
		return nil
	})

	// The cap (2): a second kept address is reserved, a third is refused
	// with an event naming the cap, and nothing is reserved for it.
	_, err = services.Create(testkit.Context(t), shopService("spare", keep), metav1.CreateOptions{})
	testkit.Must(t, err)
	spare := e.addressOf(t, e.waitIngressIn("shop", "spare", 90*time.Second).Status.LoadBalancer.Ingress[0].IP)
	_, err = services.Create(testkit.Context(t), shopService("third", keep), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.eventWith(t, "shop", "third", "AddressCapReached", "namespace shop has 2 reserved addresses, its cap (loadBalancer.addresses.maxPerNamespace 2)")
	if n := len(e.addresses(t)); n != 2 {
		t.Fatalf("%d addresses in the cloud, want 2", n)
	}
	e.releaseFreesTheCap(t, rita, addr, spare)
}

// releaseFreesTheCap releases spare, shop's kept address of Service
// spare, on rita's request and another reviewer's approval, and checks
// Service third, refused by the cap, then gets an address. held, green's,
// is refused: by examplectl, and by the controller when asked by hand.
func (e *env) releaseFreesTheCap(t *testing.T, rita *user, held, spare exampleapi.Address) {
	ruth := e.reviewer(t, "ruth")
	held = e.addressOf(t, held.IP)
	if out := e.examplectlFails(t, rita, "release", "address:shop/"+held.Name, "--yes"); !strings.Contains(out, "holds it") {
		t.Fatalf("examplectl release of an address a load balancer holds:\n%s\nwant it refused, saying it is held", out)
	}
	_, err := reviewapi.CreateAddressRelease(testkit.Context(t), rita.dyn, namespace,
		reviewapi.AddressReleaseSpec{Address: objectref.Address("shop", held.Name), Requester: rita.name})
	testkit.Must(t, err)
	e.recordEventWith(t, "ReleaseRefused", held.Name+" is not released: load balancer "+held.LoadBalancerID+" holds it")

	services := e.kube.CoreV1().Services("shop")
	testkit.Must(t, services.Delete(testkit.Context(t), "spare", metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, "spare", services.Get)
	e.addressListed(t, rita, spare, "-")
	arg := "address:shop/" + spare.Name
	// examplectl waits for the controller's decision: planned.
	out := e.examplectl(t, rita, "release", spare.IP, "--yes", "--comment", "the shop's DNS moved", "--wait=90s")
	_, decided, _ := strings.Cut(out, "The controller planned ")
	plan := planIDRE.FindString(decided)
	if plan == "" || !strings.Contains(out, "examplectl approve "+arg+" "+plan) {
		t.Fatalf("examplectl release:\n%s\nwant the release planned, with the command that approves it", out)
	}
	if out := e.examplectlFails(t, rita, "approve", arg, plan); !strings.Contains(out, "made a change it plans") {
		t.Fatalf("rita approving the release she asked for:\n%s\nwant it refused as her own change", out)
	}
	// Made by hand, her approval is not counted either.
	_, err = reviewapi.CreatePlanApproval(testkit.Context(t), rita.dyn, namespace, reviewapi.PlanApprovalSpec{
		Object: objectref.Address("shop", spare.Name), PlanID: plan, Approver: rita.name})
	testkit.Must(t, err)
	e.recordEventWith(t, "ApprovalIgnored", fmt.Sprintf("%q made a change this plan contains", rita.name))
	e.releaseOnThePage(t, ruth, held, spare, rita)
	if a := e.addressOf(t, spare.IP); a.ID != spare.ID {
		t.Fatalf("the address is %s, want %s kept until another reviewer approves", a.ID, spare.ID)
	}
	e.examplectl(t, ruth, "approve", arg, plan)
	testkit.Eventually(t, 60*time.Second, "the release applied", func() error {
		for _, a := range e.addresses(t) {
			if a.ID == spare.ID {
				return fmt.Errorf("%s (%s) is still reserved", a.ID, a.IP)
			}
		}
		return nil
	})
	// The cap has room: third, refused, gets an address at the keeper's
	// next look.
	e.waitIngressIn("shop", "third", 120*time.Second)
	if n := len(e.addresses(t)); n != 2 {
		t.Fatalf("%d addresses in the cloud after the release, want 2 (green's, third's)", n)
	}
}

// releaseOnThePage: reviewer u's review page shows held, which a load
// balancer holds, and refuses its release, in examplectl's words, through
// the confirmation a hand-made link reaches; it shows spare, whose
// release by asker waits, offering no release: the plan waiting, the
// request (who, their comment) and its record's events in the trail.
func (e *env) releaseOnThePage(t *testing.T, u *user, held, spare exampleapi.Address, asker *user) {
	t.Helper()
	page := e.startReviewPage(t, u)
	tab := newBrowser(t).tab(t)
	object := func(a exampleapi.Address) string {
		return page.base + "/object?ws=" + url.QueryEscape(e.recordOf(t, "shop", a.Name).Workspace)
	}
	do(t, tab, "open the held address's page", chromedp.Navigate(page.url), chromedp.Navigate(object(held)), chromedp.WaitVisible(chromedp.ID("address")))
	if s := text(t, tab, "main"); !strings.Contains(s, "A load balancer holds it") || !strings.Contains(s, "ReleaseRefused") {
		t.Errorf("the held address's page does not say it is held, or lacks the refused release in its trail:\n%s", s)
	}
	confirm := strings.Replace(object(held), "/object?", "/confirm?action=release&", 1)
	do(t, tab, "release it all the same", chromedp.Navigate(confirm), chromedp.WaitVisible(chromedp.ID("confirm")),
		chromedp.Click(chromedp.ID("confirm")), chromedp.WaitVisible(chromedp.CSS(".note.refused")))
	if s := text(t, tab, ".note.refused"); !strings.Contains(s, "Not released") || !strings.Contains(s, "holds it") {
		t.Errorf("refusal = %q; want the release refused, the address held", s)
	}

	do(t, tab, "open the released address's page", chromedp.Navigate(object(spare)), chromedp.WaitVisible(chromedp.ID("address")))
	s := text(t, tab, "main")
	for _, want := range []string{"awaits approval: it is not released while that waits", "AddressRelease", asker.name,
		"asks to release it: the shop's DNS moved", "AwaitingApproval"} {
		if !strings.Contains(s, want) {
			t.Errorf("the address's page lacks %q:\n%s", want, s)
		}
	}
	offered, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("#release").length`))
	if err != nil || offered != 0 {
		t.Errorf("release buttons on the page while the release waits: %d, %v; want none", offered, err)
	}
}

// examplectlFails runs examplectl as u with args, which must fail, and
// returns its output.
func (e *env) examplectlFails(t testing.TB, u *user, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(os.Getenv("EXAMPLE_BIN"), "examplectl"), append(args, "--kubeconfig", u.kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("examplectl %s as %s succeeded, want it refused:\n%s", strings.Join(args, " "), u.name, out)
	}
	return string(out)
}

// recordEventWith waits for an event of reason saying text on a plan
// record's ConfigMap, in the controller's namespace.
func (e *env) recordEventWith(t testing.TB, reason, text string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, reason+" event on a record", func() error {
		l, err := e.kube.CoreV1().Events(namespace).List(testkit.Context(t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range l.Items {
			if ev.Reason == reason && ev.InvolvedObject.Kind == "ConfigMap" && strings.Contains(ev.Message, text) {
				return nil
			}
		}
		return fmt.Errorf("no %s event containing %q", reason, text)
	})
}

// shopService is a LoadBalancer Service of namespace shop.
func shopService(name string, ann map[string]string) *v1.Service {
	svc := lbService(name, 80)
	svc.Namespace, svc.Annotations = "shop", ann
	return svc
}

// addresses are the cloud's reserved addresses of the region.
func (e *env) addresses(t testing.TB) []exampleapi.Address {
	t.Helper()
	l, err := e.api.ListAddresses(testkit.Context(t), exampleapi.AddressFilter{Region: region})
	testkit.Must(t, err)
	return l
}

// addressOf is the reserved address of ip; it fails the test without one.
func (e *env) addressOf(t testing.TB, ip string) exampleapi.Address {
	t.Helper()
	l, err := e.api.ListAddresses(testkit.Context(t), exampleapi.AddressFilter{IP: ip, Region: region})
	testkit.Must(t, err)
	if len(l) != 1 {
		t.Fatalf("%d reserved addresses of IP %s, want 1", len(l), ip)
	}
	return l[0]
}

// waitIngressIP waits until Service ns/name shows ip.
func (e *env) waitIngressIP(ns, name, ip string) {
	e.t.Helper()
	testkit.Eventually(e.t, 90*time.Second, "ingress "+ip+" of "+ns+"/"+name, func() error {
		svc, err := e.kube.CoreV1().Services(ns).Get(testkit.Context(e.t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) == 0 || ing[0].IP != ip {
			return fmt.Errorf("ingress %v", ing)
		}
		return nil
	})
}

// addressRow is the tenancy suite's row for reserved addresses, with real
// identities: bob (team-b) names the address alice (team-a) keeps and is
// refused, in words that do not name team-a, and the address stays hers;
// with team-a's ReferenceGrant for that address he waits while her
// Service holds it, and takes it, the same IP, once she deletes it.
func (e *env) addressRow(t *testing.T, alice, bob *user) {
	kept := lbService("kept", 80)
	kept.Namespace, kept.Annotations = "team-a", map[string]string{string(annotations.LBAddressKeep): "true"}
	e.createService(t, alice, kept)
	ip := e.waitIngressIn("team-a", "kept", 90*time.Second).Status.LoadBalancer.Ingress[0].IP
	addr := e.addressOf(t, ip)

	// Bob's Service retains its load balancer when it goes: the address,
	// team-a's, must not go with it.
	taker := lbService("taker", 80)
	taker.Namespace, taker.Spec.LoadBalancerIP = "team-b", ip
	taker.Annotations = map[string]string{string(annotations.LBDeletionPolicy): annotations.DeletionRetain}
	e.createService(t, bob, taker)
	e.eventWith(t, "team-b", "taker", "ReferenceRefused", "reserved address")
	e.noEventMentions(t, "team-b", "team-a")
	if a := e.addressOf(t, ip); a.LoadBalancerID != addr.LoadBalancerID {
		t.Fatalf("refused, bob's Service moved alice's address to %q", a.LoadBalancerID)
	}

	e.installReferenceGrants(t)
	grant, grants := e.serviceGrant(t, "team-a", "team-b-takes-kept", "team-b", tenancy.GrantAddressKind, addr.ID)
	_, err := grants.Create(testkit.Context(t), grant, metav1.CreateOptions{})
	testkit.Must(t, err)
	t.Cleanup(func() { _ = grants.Delete(context.Background(), grant.GetName(), metav1.DeleteOptions{}) })
	bumpService(t, bob, "team-b", "taker")
	e.eventWith(t, "team-b", "taker", "AddressHeld", "is held by a Service of another namespace")
	testkit.Must(t, alice.kube.CoreV1().Services("team-a").Delete(testkit.Context(t), "kept", metav1.DeleteOptions{}))
	e.waitIngressIP("team-b", "taker", ip)
	if a := e.addressOf(t, ip); a.ID != addr.ID || a.Tags[exampleapi.TagNamespace] != "team-a" {
		t.Fatalf("bob's Service holds %s (tags %v), want team-a's %s", a.ID, a.Tags, addr.ID)
	}
	testkit.Must(t, bob.kube.CoreV1().Services("team-b").Delete(testkit.Context(t), "taker", metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, "taker", e.kube.CoreV1().Services("team-b").Get)
	// His load balancer handed over, the address stays team-a's: off his
	// load balancer, reserved, the same IP.
	testkit.Eventually(t, 60*time.Second, "team-a's address detached from bob's handed-over load balancer", func() error {
		a := e.addressOf(t, ip)
		if a.ID != addr.ID || a.LoadBalancerID != "" || a.Tags[exampleapi.TagNamespace] != "team-a" {
			return fmt.Errorf("%+v", a)
		}
		return nil
	})
}

// addressListed checks that examplectl addresses, as u, lists a with its
// IP, owner and holder ("-": detached, no load balancer named).
func (e *env) addressListed(t testing.TB, u *user, a exampleapi.Address, held string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "examplectl addresses lists "+a.ID, func() error {
		out := e.examplectl(t, u, "addresses", "-n", "shop")
		for _, line := range strings.Split(out, "\n") {
			if !strings.Contains(line, "address:shop/"+a.Name) || !strings.Contains(line, a.ID) || !strings.Contains(line, a.IP) {
				continue
			}
			if held == "-" && !strings.Contains(line, "lb-") || held != "-" && strings.Contains(line, held) {
				return nil
			}
		}
		return fmt.Errorf("no line for %s %s held by %q:\n%s", a.ID, a.IP, held, out)
	})
}

// keptAddress reserves an address for namespace ns the way a team does:
// a Service with address-keep, deleted once it shows the address. It
// returns the address, reserved, detached, the namespace's.
func (e *env) keptAddress(t *testing.T, ns string) exampleapi.Address {
	t.Helper()
	svc := lbService("reserve-address", 80)
	svc.Namespace, svc.Annotations = ns, map[string]string{string(annotations.LBAddressKeep): "true"}
	services := e.kube.CoreV1().Services(ns)
	_, err := services.Create(testkit.Context(t), svc, metav1.CreateOptions{})
	testkit.Must(t, err)
	ip := e.waitIngressIn(ns, svc.Name, 90*time.Second).Status.LoadBalancer.Ingress[0].IP
	testkit.Must(t, services.Delete(testkit.Context(t), svc.Name, metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, svc.Name, services.Get)
	a := e.addressOf(t, ip)
	if a.Tags[exampleapi.TagNamespace] != ns || a.LoadBalancerID != "" {
		t.Fatalf("kept address %s of %s: tags %v, load balancer %q; want %s's, detached", a.ID, ip, a.Tags, a.LoadBalancerID, ns)
	}
	// Kept as a reviewer sees it (examplectl addresses, release): the
	// cloud detaches it with the load balancer's destroy, its record once
	// the keeper's next apply has run.
	testkit.Eventually(t, 60*time.Second, "the kept address's record detached", func() error {
		all, err := records.NewStore(e.kube, namespace, 0).List(testkit.Context(t))
		if err != nil {
			return err
		}
		for _, r := range all {
			if r.Object != objectref.Address(ns, a.Name) {
				continue
			}
			if r.Applied == nil || r.Applied.Output("ip") != ip || r.Applied.Output("load_balancer_id") != "" {
				return fmt.Errorf("the record of %s: last apply %+v", r.Object.Arg(), r.Applied)
			}
			return nil
		}
		return fmt.Errorf("no record of address %s/%s", ns, a.Name)
	})
	return a
}
