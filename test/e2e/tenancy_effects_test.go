package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// The effect rows of TestTenancy (docs/tenancy.md): what a tenant's
// Service does to a shared object, rather than what it references.

// poolDelaysRow: a shared pool carries a Service's deregistration delay
// only once the Service's plan is applied. Bob's Service awaiting
// approval, his Service the tenancy rules refuse and his Service of
// another loadBalancerClass each ask for 1h; the pool every load
// balancer shares keeps the cluster's 30s, also after a node joins and
// the pools are applied again. Once a reviewer approves his plan, the
// pool drains for 1h and its audit line names his Service.
func (e *env) poolDelaysRow(t *testing.T, bob *user) {
	const asked = "1h"
	ask := func(name string, ann map[string]string) *v1.Service {
		s := lbServiceIn("team-b", name, 80)
		s.Annotations = map[string]string{string(annotations.LBDeregistrationDelay): asked}
		for k, v := range ann {
			s.Annotations[k] = v
		}
		return s
	}
	everyNode := func() exampleapi.TargetPool {
		for _, p := range e.pools() {
			if sel, ok := p.Tags[renderer.TagNodeSelector]; ok && sel == "" {
				return p
			}
		}
		t.Fatal("no pool of every node")
		return exampleapi.TargetPool{}
	}
	const cluster = 30 // cloudconfig.DefaultDeregistrationDelay
	if d := everyNode().DeregistrationDelaySeconds; d != cluster {
		t.Fatalf("the pool of every node drains for %ds before the row, want the cluster's %ds", d, cluster)
	}

	held := e.createService(t, bob, ask("held", map[string]string{string(annotations.LBApplyPolicy): string(annotations.ApplyManual)}))
	e.awaitingPlanIn("team-b", "held")
	refused := ask("refused", map[string]string{string(annotations.LBCertificateIDs): "cert-0000000000000000", string(annotations.LBHTTPSPorts): "80"})
	e.createService(t, bob, refused)
	e.eventWith(t, "team-b", "refused", "ReferenceRefused", "certificate \"cert-0000000000000000\" refused")
	other := ask("other-class", nil)
	class := "other.example.com/lb"
	other.Spec.LoadBalancerClass = &class
	e.createService(t, bob, other)

	// A node joining applies the pools again, from what they carry.
	node := e.addNode("node-delays", "ex-west-1a")
	id := e.instance(node.Name).ID
	testkit.Eventually(t, 90*time.Second, "the new node in the pool of every node", func() error {
		if p := everyNode(); !slices.Contains(p.Targets, id) {
			return fmt.Errorf("targets %v", p.Targets)
		}
		return nil
	})
	if d := everyNode().DeregistrationDelaySeconds; d != cluster {
		t.Fatalf("the pool of every node drains for %ds: an unapplied, refused or other class's Service's %s reached it", d, asked)
	}

	rhea := e.reviewer(t, "rhea")
	e.approveUntil(t, rhea, serviceRef(held), func() error {
		if d := everyNode().DeregistrationDelaySeconds; d != 3600 {
			return fmt.Errorf("the pool drains for %ds", d)
		}
		return nil
	})
	testkit.Eventually(t, 30*time.Second, "an audit line of the pools naming Service team-b/held", func() error {
		for _, a := range e.auditEntries(t) {
			if strings.HasPrefix(a.Object, objectref.KindTargetPools) && a.Action == "apply" && strings.Contains(a.Details["carries"], "asked by Service team-b/held") {
				return nil
			}
		}
		return fmt.Errorf("none")
	})
}

// guestCannotStallRow: a guest of alice's group names a certificate of
// its own namespace, which the group's load balancer (team-a's) may not
// serve: the guest is left out with a refusal in team-b, naming nothing
// of team-a's, and alice's new port is applied as usual. A guest whose
// port collides with alice's loses that listener, with an event in its
// namespace, and alice's next port is applied too.
func (e *env) guestCannotStallRow(t *testing.T, alice, bob *user) {
	e.installReferenceGrants(t)
	grant, grants := e.groupGrant(t, "team-a", "team-b-joins-mixed", "team-b", "mixed")
	_, err := grants.Create(testkit.Context(t), grant, metav1.CreateOptions{})
	testkit.Must(t, err)

	home := lbServiceIn("team-a", "mixed-home", 80)
	home.Annotations = map[string]string{string(annotations.LBGroup): "mixed"}
	e.createService(t, alice, home)
	ip := e.waitIngressIn("team-a", "mixed-home", 90*time.Second).Status.LoadBalancer.Ingress[0].IP
	lb, err := e.cloudLB(ip)
	testkit.Must(t, err)

	// Team-b's own certificate, as the controller uploads one for a
	// Service of team-b.
	c := simtest.NewCert(t, simtest.CertOptions{CommonName: "b.example.test"})
	cert, err := e.api.CreateCertificate(testkit.Context(t), exampleapi.CreateCertificateRequest{Name: "team-b-own", Region: region,
		CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM,
		Tags: map[string]string{lbmodel.TagClusterID: "e2e", lbmodel.TagServiceNamespace: "team-b"}})
	testkit.Must(t, err)
	guest := lbServiceIn("team-b", "mixed-guest", 8443)
	guest.Annotations = map[string]string{
		string(annotations.LBGroup):          "team-a/mixed",
		string(annotations.LBHTTPSPorts):     "8443",
		string(annotations.LBCertificateIDs): cert.ID,
	}
	e.createService(t, bob, guest)
	e.eventWith(t, "team-b", "mixed-guest", "ReferenceRefused", "served by a load balancer of namespace team-a (the group's)")

	addPort := func(port int32) {
		cur, err := alice.kube.CoreV1().Services("team-a").Get(testkit.Context(t), "mixed-home", metav1.GetOptions{})
		testkit.Must(t, err)
		cur.Spec.Ports = append(cur.Spec.Ports, v1.ServicePort{Name: fmt.Sprint("p", port), Protocol: v1.ProtocolTCP, Port: port})
		_, err = alice.kube.CoreV1().Services("team-a").Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		testkit.Must(t, err)
	}
	ports := func(want ...int) func() error {
		return func() error {
			lb, err := e.api.GetLoadBalancer(testkit.Context(t), lb.ID)
			if err != nil {
				return err
			}
			var got []int
			for _, l := range lb.Listeners {
				got = append(got, l.Port)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("ports %v", got)
			}
			return nil
		}
	}
	addPort(81)
	testkit.Eventually(t, 90*time.Second, "alice's new port 81 on her group's load balancer, without the guest's", ports(80, 81))

	collide := lbServiceIn("team-b", "mixed-collide", 80)
	collide.Annotations = map[string]string{string(annotations.LBGroup): "team-a/mixed"}
	e.createService(t, bob, collide)
	e.eventWith(t, "team-b", "mixed-collide", "ListenerConflict", "Listener tcp/80 is not served: a Service of namespace team-a")
	addPort(82)
	testkit.Eventually(t, 90*time.Second, "alice's new port 82 on her group's load balancer", ports(80, 81, 82))
	e.noEventMentions(t, "team-b", "mixed-home") // alice's Service, named only by its namespace
	if s, err := e.kube.CoreV1().Services("team-b").Get(testkit.Context(t), "mixed-guest", metav1.GetOptions{}); err != nil || len(s.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("the refused guest has an address: %v (%v)", s.Status.LoadBalancer.Ingress, err)
	}
}
