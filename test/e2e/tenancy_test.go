package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/tenancy"
)

// The tenant boundary (docs/tenancy.md), with real identities: alice may
// edit Services in team-a, bob in team-b, and nothing else. Each row is
// one kind of reference across the boundary, asserting the safe outcome
// in the cloud (the simulator's objects) and in events. A new kind of
// reference adds a row.
func TestTenancy(t *testing.T) {
	testsize.SkipShort(t, "a row per reference, each through its plans and approvals")
	t.Parallel()
	e := newEnv(t, options{tlsResync: "1s", poolsPrune: "2s"})
	e.nodeA()
	for _, ns := range []string{"team-a", "team-b"} {
		e.namespace(t, ns)
		e.allowTLSSecrets(t, ns)
	}
	alice, bob := e.tenant(t, "team-a", "alice"), e.tenant(t, "team-b", "bob")
	t.Cleanup(func() {
		if t.Failed() {
			c, cancel := context.WithTimeout(context.Background(), time.Minute) // t's context is done by now
			defer cancel()
			for _, ns := range []string{"team-a", "team-b"} {
				evs, err := e.kube.CoreV1().Events(ns).List(c, metav1.ListOptions{})
				if err == nil {
					for _, ev := range evs.Items {
						t.Logf("event %s/%s %s: %s", ns, ev.InvolvedObject.Name, ev.Reason, ev.Message)
					}
				}
			}
		}
	})

	// Alice's HTTPS Service: its certificate is uploaded for team-a.
	c1 := simtest.NewCert(t, simtest.CertOptions{CommonName: "a.example.test"})
	c2 := simtest.NewCert(t, simtest.CertOptions{CommonName: "a.example.test"})
	secrets := e.kube.CoreV1().Secrets("team-a")
	_, err := secrets.Create(testkit.Context(t), tlsSecretObject("team-a", "web-tls", c1), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.createService(t, alice, httpsLBService("team-a", "web", "web-tls"))
	ip := e.waitIngressIn("team-a", "web", 90*time.Second).Status.LoadBalancer.Ingress[0].IP
	_, aliceCert := e.servedCertificate(t, ip, c1)

	t.Run("certificate of another namespace", func(t *testing.T) {
		// Bob names alice's certificate: refused before planning, with an
		// event naming the annotation and not team-a; nothing in the
		// cloud serves it for him.
		shop := lbServiceIn("team-b", "shop", 443)
		shop.Annotations = map[string]string{
			string(annotations.LBHTTPSPorts):     "443",
			string(annotations.LBCertificateIDs): aliceCert,
		}
		e.createService(t, bob, shop)
		e.eventWith(t, "team-b", "shop", "ReferenceRefused", "annotation "+string(annotations.LBCertificateIDs)+": certificate \""+aliceCert+"\" refused")
		e.noEventMentions(t, "team-b", "team-a")
		e.certificateServedOnlyBy(t, aliceCert, ip)

		// Alice's rotation and deletion complete while bob keeps trying.
		renewTLSSecret(t, e.kube, "team-a", "web-tls", c2)
		_, rotated := e.servedCertificate(t, ip, c2)
		testkit.Eventually(t, 30*time.Second, "alice's old certificate deleted", func() error {
			if _, err := e.api.GetCertificate(testkit.Context(t), aliceCert); !exampleapi.IsNotFound(err) {
				return fmt.Errorf("certificate %s: %v", aliceCert, err)
			}
			return nil
		})
		testkit.Must(t, alice.kube.CoreV1().Services("team-a").Delete(testkit.Context(t), "web", metav1.DeleteOptions{}))
		testkit.Eventually(t, 60*time.Second, "alice's Service and certificate gone", func() error {
			if _, err := e.kube.CoreV1().Services("team-a").Get(testkit.Context(t), "web", metav1.GetOptions{}); err == nil {
				return fmt.Errorf("Service team-a/web still there (finalizer)")
			}
			if _, err := e.api.GetCertificate(testkit.Context(t), rotated); !exampleapi.IsNotFound(err) {
				return fmt.Errorf("certificate %s: %v", rotated, err)
			}
			return nil
		})
	})

	t.Run("the renewer of a TLS Secret cannot approve the plan it causes", func(t *testing.T) {
		// Rita edits Services and Secrets in team-a and reviews; victor
		// only reviews. A Secret has no author Kubernetes could vouch
		// for: whoever may edit it cannot approve the plan it causes.
		rita := e.newUser(t, "team-a", "rita")
		e.allowSecretEdits(t, "team-a", rita)
		e.bindReviewer(t, "team-a", "rita")
		e.waitAllowed(t, rita, "create", reviewapi.Group, "planapprovals", namespace)
		victor := e.reviewer(t, "victor")

		d1 := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
		d2 := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
		_, err := secrets.Create(testkit.Context(t), tlsSecretObject("team-a", "shop-tls", d1), metav1.CreateOptions{})
		testkit.Must(t, err)
		shop := httpsLBService("team-a", "shop", "shop-tls")
		shop.Annotations[string(annotations.LBApplyPolicy)] = string(annotations.ApplyManual)
		shop = e.createService(t, alice, shop)
		var ip string
		e.approveUntil(t, victor, serviceRef(shop), func() error {
			in := e.kube.CoreV1().Services("team-a")
			cur, err := in.Get(testkit.Context(t), "shop", metav1.GetOptions{})
			if err != nil || len(cur.Status.LoadBalancer.Ingress) == 0 {
				return fmt.Errorf("no ingress yet (%v)", err)
			}
			ip = cur.Status.LoadBalancer.Ingress[0].IP
			return nil
		})
		e.servedCertificate(t, ip, d1)
		// The record names its last apply once none is under way (an
		// apply's start clears it); read at once, it was absent once.
		var created string
		testkit.Eventually(t, 60*time.Second, "the record's last apply", func() error {
			r := e.recordOf(t, "team-a", "shop")
			if r == nil || r.Applied == nil {
				return fmt.Errorf("the record of team-a/shop names no apply")
			}
			created = r.Applied.PlanID
			return nil
		})
		// The plans that awaited approval before the renewal are not its:
		// the record's last apply may already name a later plan with no
		// changes (a reconcile after new hosts), not the creating one.
		before := e.awaitedIn("team-a", "shop")

		renewTLSSecret(t, rita.kube, "team-a", "shop-tls", d2)
		renewal := e.awaitingPlanIn("team-a", "shop", append(before, created)...)
		testkit.Must(t, e.approveAs(t, rita, shop, renewal, rita.name))
		e.eventWith(t, "team-a", "shop", "ApprovalIgnored", `"`+rita.name+`" may edit Secret team-a/shop-tls, whose editor cannot be verified`)
		id := e.approveUntil(t, victor, serviceRef(shop), func() error {
			if r := e.recordOf(t, "team-a", "shop"); r.Applied == nil || r.Applied.PlanID == created {
				return fmt.Errorf("the renewal is not applied")
			}
			return nil
		})
		e.servedCertificate(t, ip, d2)
		e.auditLine(t, "apply", id, victor.name)
	})

	t.Run("node selections create no pool outside review; idle pools go", func(t *testing.T) {
		pools := func() []string {
			l, err := e.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{})
			testkit.Must(t, err)
			var sels []string
			for _, p := range l {
				sels = append(sels, p.Tags[renderer.TagNodeSelector])
			}
			slices.Sort(sels)
			return sels
		}
		before := pools()
		// Under manual, bob's selection flips plan his Service with its
		// nodes listed, for review; nothing is created in the cloud.
		flip := lbServiceIn("team-b", "flip", 80)
		flip.Annotations = map[string]string{
			string(annotations.LBApplyPolicy):  string(annotations.ApplyManual),
			string(annotations.LBNodeSelector): "flip=0",
		}
		e.createService(t, bob, flip)
		seen := []string{e.awaitingPlanIn("team-b", "flip")}
		for i := 1; i <= 3; i++ {
			cur, err := bob.kube.CoreV1().Services("team-b").Get(testkit.Context(t), "flip", metav1.GetOptions{})
			testkit.Must(t, err)
			// A new port too: a selection matching no node plans the same
			// load balancer, and the test waits for each plan.
			cur.Annotations[string(annotations.LBNodeSelector)] = fmt.Sprintf("flip=%d", i)
			cur.Spec.Ports[0].Port = int32(80 + i)
			_, err = bob.kube.CoreV1().Services("team-b").Update(testkit.Context(t), cur, metav1.UpdateOptions{})
			testkit.Must(t, err)
			seen = append(seen, e.awaitingPlanIn("team-b", "flip", seen...))
		}
		if got := pools(); !slices.Equal(got, before) {
			t.Fatalf("selection flips under manual changed the pools: %v, were %v", got, before)
		}

		// Under auto, a selection's pool is the Service's change (the
		// audit names it); once no Service selects it, it is destroyed.
		pooled := lbServiceIn("team-b", "pooled", 80)
		pooled.Annotations = map[string]string{string(annotations.LBNodeSelector): "pool=x"}
		e.createService(t, bob, pooled)
		e.waitIngressIn("team-b", "pooled", 90*time.Second)
		if got := pools(); !slices.Contains(got, "pool=x") {
			t.Fatalf("no pool for pool=x: %v", got)
		}
		caused := false
		for _, a := range e.auditEntries(t) {
			caused = caused || strings.HasPrefix(a.Object, objectref.KindTargetPools) && a.Details["cause"] == "Service team-b/pooled"
		}
		if !caused {
			t.Error("no audit line of the pools names Service team-b/pooled as the cause")
		}
		cur, err := bob.kube.CoreV1().Services("team-b").Get(testkit.Context(t), "pooled", metav1.GetOptions{})
		testkit.Must(t, err)
		cur.Annotations[string(annotations.LBNodeSelector)] = "pool=y"
		_, err = bob.kube.CoreV1().Services("team-b").Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		testkit.Must(t, err)
		testkit.Eventually(t, 90*time.Second, "the pool of pool=x destroyed", func() error {
			if got := pools(); slices.Contains(got, "pool=x") || !slices.Contains(got, "pool=y") {
				return fmt.Errorf("pools %v", got)
			}
			return nil
		})
	})

	t.Run("a reserved address of another namespace needs its ReferenceGrant", func(t *testing.T) { e.addressRow(t, alice, bob) })

	t.Run("group of another namespace needs its ReferenceGrant", func(t *testing.T) {
		front := lbServiceIn("team-a", "front", 80)
		front.Annotations = map[string]string{string(annotations.LBGroup): "front"}
		e.createService(t, alice, front)
		ip := e.waitIngressIn("team-a", "front", 90*time.Second).Status.LoadBalancer.Ingress[0].IP

		guest := lbServiceIn("team-b", "guest", 8080)
		guest.Annotations = map[string]string{string(annotations.LBGroup): "team-a/front"}
		e.createService(t, bob, guest)
		e.eventWith(t, "team-b", "guest", "ReferenceRefused", "namespace team-a has no ReferenceGrant")
		lb, err := e.cloudLB(ip)
		testkit.Must(t, err)
		if got := simtest.Listeners(lb); len(got) != 1 {
			t.Fatalf("without consent the guest's port reached the owner's address: %v", got)
		}
		// An error elsewhere in the guest's annotations (internal, with
		// spec.loadBalancerIP) skips no check: refused, told its error,
		// and its port is nowhere on the owner's load balancer.
		sly := lbServiceIn("team-b", "sly", 8081)
		sly.Annotations = map[string]string{string(annotations.LBGroup): "team-a/front", string(annotations.LBInternal): "true"}
		sly.Spec.LoadBalancerIP = "203.0.113.77"
		e.createService(t, bob, sly)
		e.eventWith(t, "team-b", "sly", "InvalidService", "spec.loadBalancerIP")
		if lb, err = e.cloudLB(ip); err != nil || len(simtest.Listeners(lb)) != 1 {
			t.Fatalf("a guest in error reached the owner's load balancer: %v, %v", simtest.Listeners(lb), err)
		}
		testkit.Must(t, bob.kube.CoreV1().Services("team-b").Delete(testkit.Context(t), "sly", metav1.DeleteOptions{}))

		// Team-a consents (its owner, here the admin, grants team-b's
		// Services): the guest joins.
		e.installReferenceGrants(t)
		grant, grants := e.groupGrant(t, "team-a", "team-b-joins-front", "team-b", "front")
		_, err = grants.Create(testkit.Context(t), grant, metav1.CreateOptions{})
		testkit.Must(t, err)
		// The service controller retries the refused guest with back-off;
		// an update makes it try now.
		bumpService(t, bob, "team-b", "guest")
		if got := e.waitIngressIn("team-b", "guest", 90*time.Second).Status.LoadBalancer.Ingress[0].IP; got != ip {
			t.Fatalf("guest got %s, want the group's %s", got, ip)
		}
		guestServed := func(want bool) func() error {
			return func() error {
				lb, err := e.cloudLB(ip)
				if err != nil {
					return err
				}
				got := simtest.Listeners(lb)
				if slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "tcp/8080->") }) != want {
					return fmt.Errorf("listeners of the owner's load balancer: %v", got)
				}
				return nil
			}
		}
		testkit.Must(t, guestServed(true)())

		// Team-a takes its consent back: the guest's listener leaves the
		// owner's load balancer within seconds, though neither Service
		// changed; both sides are told, the guest in its own words.
		testkit.Must(t, grants.Delete(testkit.Context(t), grant.GetName(), metav1.DeleteOptions{}))
		testkit.Eventually(t, 10*time.Second, "the guest's port off the owner's load balancer", guestServed(false))
		e.eventWith(t, "team-b", "guest", "ReferenceGrantWithdrawn",
			`annotation `+string(annotations.LBGroup)+`: load balancer group "front" of namespace team-a no longer takes this Service: namespace team-a has no ReferenceGrant`)
		e.eventWith(t, "team-a", "front", "ReferenceGrantWithdrawn", "Load balancer group team-a/front no longer serves a Service of namespace team-b")
		testkit.Eventually(t, 30*time.Second, "the guest's address cleared", func() error {
			cur, err := e.kube.CoreV1().Services("team-b").Get(testkit.Context(t), "guest", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if in := cur.Status.LoadBalancer.Ingress; len(in) > 0 {
				return fmt.Errorf("the guest shows %v", in)
			}
			return nil
		})
		// Nothing of team-a's the guest did not write itself: not the
		// grant, no object of team-a by name (the owner's Service is
		// team-a/front too).
		e.noEventMentions(t, "team-b", grant.GetName())
		e.noEventMentions(t, "team-b", "team-a/")

		// Given again: the guest is back, with the group's address, though
		// nothing of its own changed.
		_, err = grants.Create(testkit.Context(t), grant, metav1.CreateOptions{})
		testkit.Must(t, err)
		testkit.Eventually(t, 30*time.Second, "the guest's port back on the owner's load balancer", guestServed(true))
		if got := e.waitIngressIn("team-b", "guest", 30*time.Second).Status.LoadBalancer.Ingress[0].IP; got != ip {
			t.Fatalf("guest let in again got %s, want the group's %s", got, ip)
		}

		// The controller may no longer read ReferenceGrants (its
		// ClusterRole loses the rule): consent it cannot read is no
		// consent, never the grants it read before.
		e.withoutGrantsReading(t)
		testkit.Eventually(t, 90*time.Second, "the guest's port off once grants cannot be read", guestServed(false))
		e.eventWith(t, "team-b", "guest", "ReferenceGrantWithdrawn", "cannot read the ReferenceGrants of namespace team-a")
	})

	t.Run("a name reserved for or used by another namespace is refused", func(t *testing.T) {
		// Alice's explicit name, taken first.
		named := lbServiceIn("team-a", "named", 80)
		named.Annotations = map[string]string{string(annotations.LBName): "team-a-shop"}
		e.createService(t, alice, named)
		e.waitIngressIn("team-a", "named", 90*time.Second)

		// Bob squats the computable default name of alice's group back,
		// before it exists ("e2e": the harness's cluster id), and alice's
		// explicit name.
		squatted := renderer.GroupLoadBalancerName("e2e", "team-a", "back")
		for _, squat := range []struct{ svc, lb string }{{"squat-default", squatted}, {"squat-named", "team-a-shop"}} {
			svcName, lbName := squat.svc, squat.lb
			s := lbServiceIn("team-b", svcName, 80)
			s.Annotations = map[string]string{string(annotations.LBName): lbName}
			e.createService(t, bob, s)
			e.eventWith(t, "team-b", svcName, "ReferenceRefused", "annotation "+string(annotations.LBName)+": load balancer name \""+lbName+"\" refused")
		}
		// Nothing of alice's objects (bob wrote "team-a-shop" himself).
		e.noEventMentions(t, "team-b", "team-a/")
		if l := e.lbsNamed(t, squatted); len(l) != 0 {
			t.Fatalf("bob has a load balancer of team-a's group's default name: %+v", l[0])
		}
		if l := e.lbsNamed(t, "team-a-shop"); len(l) != 1 || l[0].Tags[lbmodel.TagServiceNamespace] != "team-a" {
			t.Fatalf("load balancers named team-a-shop: %+v", l)
		}

		// Alice's group is created under its default name, hers.
		back := lbServiceIn("team-a", "back", 80)
		back.Annotations = map[string]string{string(annotations.LBGroup): "back"}
		e.createService(t, alice, back)
		e.waitIngressIn("team-a", "back", 90*time.Second)
		if l := e.lbsNamed(t, squatted); len(l) != 1 || l[0].Tags[lbmodel.TagServiceNamespace] != "team-a" {
			t.Fatalf("load balancers of the group's default name: %+v", l)
		}
	})

	// Effects on shared objects (tenancy_effects_test.go).
	t.Run("a shared pool carries only the delays of applied Services", func(t *testing.T) { e.poolDelaysRow(t, bob) })
	t.Run("a guest cannot stall the group it joins", func(t *testing.T) { e.guestCannotStallRow(t, alice, bob) })
}

// approveUntil approves, as u, the plan of ref awaiting approval until
// done holds, and returns the id approved last: a plan may be superseded
// right after it was made, and one planned again needs a fresh approval.
func (e *env) approveUntil(t testing.TB, u *user, ref objectref.Ref, done func() error) string {
	t.Helper()
	var approved records.Plan
	testkit.EventuallyEvery(t, 3*time.Minute, time.Second, "approved and applied", func() error {
		if done() == nil {
			return nil
		}
		r := e.recordOf(t, ref.Namespace, ref.Name)
		if r == nil || r.Latest() == nil || r.Latest().Outcome != records.AwaitingApproval {
			return fmt.Errorf("no plan awaiting approval")
		}
		if p := r.Latest(); p.ID != approved.ID || !p.PlannedAt.Equal(approved.PlannedAt) {
			testkit.Must(t, e.approveObjectAs(t, u, ref, p.ID, u.name))
			approved = *p
		}
		return done()
	})
	return approved.ID
}

// allowSecretEdits lets u edit Secrets in ns.
func (e *env) allowSecretEdits(t testing.TB, ns string, u *user) {
	t.Helper()
	sa := strings.Split(u.name, ":") // system:serviceaccount:ns:name
	e.bindRole(t, ns, "secret-editor-"+strings.ReplaceAll(u.name, ":", "-"), subject(sa[2], sa[3]),
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update", "patch"}})
	e.waitAllowed(t, u, "update", "", "secrets", ns)
}

// noEventMentions fails if an event in ns mentions text.
func (e *env) noEventMentions(t testing.TB, ns, text string) {
	t.Helper()
	evs, err := e.kube.CoreV1().Events(ns).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, ev := range evs.Items {
		if strings.Contains(ev.Message, text) {
			t.Errorf("event %s on %s in %s mentions %q: %s", ev.Reason, ev.InvolvedObject.Name, ns, text, ev.Message)
		}
	}
}

// certificateServedOnlyBy fails if a load balancer other than the one at
// ip serves certificate id.
func (e *env) certificateServedOnlyBy(t testing.TB, id, ip string) {
	t.Helper()
	lbs, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	for _, lb := range lbs {
		for _, l := range lb.Listeners {
			for _, c := range l.CertificateIDs {
				if c == id && lb.IPv4 != ip {
					t.Errorf("load balancer %s (%s) serves certificate %s", lb.ID, lb.Name, id)
				}
			}
		}
	}
}

// groupGrant is a ReferenceGrant in ns letting Services of namespace
// from join its load balancer group, and the client of ns's grants as the
// admin (who speaks for every namespace here).
func (e *env) groupGrant(t testing.TB, ns, name, from, group string) (*unstructured.Unstructured, dynamic.ResourceInterface) {
	t.Helper()
	return e.serviceGrant(t, ns, name, from, tenancy.GrantKind, group)
}

// serviceGrant is a ReferenceGrant in ns letting Services of namespace
// from reach its objects of kind (of tenancy.GrantGroup) named target,
// and the client of ns's grants as the admin.
func (e *env) serviceGrant(t testing.TB, ns, name, from, kind, target string) (*unstructured.Unstructured, dynamic.ResourceInterface) {
	t.Helper()
	g := gatewayv1beta1.ObjectName(target)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&gatewayv1beta1.ReferenceGrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1beta1.GroupVersion.String(), Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: "", Kind: "Service", Namespace: gatewayv1beta1.Namespace(from)}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: tenancy.GrantGroup, Kind: gatewayv1beta1.Kind(kind), Name: &g}},
		},
	})
	testkit.Must(t, err)
	return &unstructured.Unstructured{Object: obj}, e.adminDyn(t).Resource(referenceGrants).Namespace(ns)
}

// installReferenceGrants installs Gateway API's ReferenceGrant CRD (the
// reference-grants component) and waits until it is served.
func (e *env) installReferenceGrants(t testing.TB) {
	t.Helper()
	objs, err := deploy.Component(deploy.ReferenceGrants)
	testkit.Must(t, err)
	testkit.Must(t, deploy.Apply(testkit.Context(t), e.kube, objs))
	testkit.Eventually(t, 30*time.Second, "referencegrants served", func() error {
		_, err := e.adminDyn(t).Resource(referenceGrants).Namespace("default").List(testkit.Context(t), metav1.ListOptions{})
		return err
	})
}

// withoutGrantsReading takes referencegrants out of the controller's
// ClusterRole (the chart's) until the test ends.
func (e *env) withoutGrantsReading(t testing.TB) {
	t.Helper()
	readsGrants := func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "referencegrants") }
	objs, err := chartRBAC()
	testkit.Must(t, err)
	name := ""
	for _, o := range objs {
		if cr, ok := o.(*rbacv1.ClusterRole); ok && slices.ContainsFunc(cr.Rules, readsGrants) {
			name = cr.Name
		}
	}
	if name == "" {
		t.Fatal("the chart's RBAC has no ClusterRole that reads referencegrants")
	}
	roles := e.kube.RbacV1().ClusterRoles()
	cr, err := roles.Get(testkit.Context(t), name, metav1.GetOptions{})
	testkit.Must(t, err)
	kept := slices.Clone(cr.Rules)
	cr.Rules = slices.DeleteFunc(cr.Rules, readsGrants)
	_, err = roles.Update(testkit.Context(t), cr, metav1.UpdateOptions{})
	testkit.Must(t, err)
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cur, err := roles.Get(c, name, metav1.GetOptions{})
		if err == nil {
			cur.Rules = kept
			_, err = roles.Update(c, cur, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("restore ClusterRole %s: %v", name, err)
		}
	})
}

// bumpService changes an annotation the controller does not render, as u,
// so the service controller syncs the Service now.
func bumpService(t testing.TB, u *user, ns, name string) {
	t.Helper()
	svc, err := u.kube.CoreV1().Services(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
	testkit.Must(t, err)
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	svc.Annotations["example.test/bump"] = time.Now().Format(time.RFC3339Nano)
	_, err = u.kube.CoreV1().Services(ns).Update(testkit.Context(t), svc, metav1.UpdateOptions{})
	testkit.Must(t, err)
}

// referenceGrants is the resource the tenancy rows create and list.
var referenceGrants = schema.GroupVersionResource{Group: gatewayv1beta1.GroupName, Version: "v1beta1", Resource: "referencegrants"}
