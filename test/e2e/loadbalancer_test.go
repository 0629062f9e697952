package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/records"
)

// lbService is a LoadBalancer Service in namespace default.
func lbService(name string, ports ...int32) *v1.Service {
	return lbServiceIn("default", name, ports...)
}

// lbServiceIn is a LoadBalancer Service ns/name selecting app=name, a TCP
// port each of ports.
func lbServiceIn(ns, name string, ports ...int32) *v1.Service {
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name}},
	}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, v1.ServicePort{Name: fmt.Sprint("p", p), Protocol: v1.ProtocolTCP, Port: p})
	}
	return svc
}

// waitIngress waits for the ingress IP of Service default/name.
func (e *env) waitIngress(name string, timeout time.Duration) *v1.Service {
	e.t.Helper()
	return e.waitIngressIn("default", name, timeout)
}

// waitIngressIn waits for the Service's ingress IP.
func (e *env) waitIngressIn(ns, name string, timeout time.Duration) *v1.Service {
	e.t.Helper()
	var svc *v1.Service
	testkit.Eventually(e.t, timeout, "ingress of "+ns+"/"+name, func() error {
		var err error
		svc, err = e.kube.CoreV1().Services(ns).Get(testkit.Context(e.t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(svc.Status.LoadBalancer.Ingress) == 0 || svc.Status.LoadBalancer.Ingress[0].IP == "" {
			return fmt.Errorf("no ingress yet")
		}
		return nil
	})
	return svc
}

// targetsOf is where a load balancer forwards: its target pool's
// instances, or the ones it lists.
func (e *env) targetsOf(lb *exampleapi.LoadBalancer) ([]string, error) {
	if lb.TargetPoolID == "" {
		return slices.Clone(lb.Targets), nil
	}
	p, err := e.api.GetTargetPool(testkit.Context(e.t), lb.TargetPoolID)
	if err != nil {
		return nil, err
	}
	return slices.Clone(p.Targets), nil
}

// eventuallyTargets waits until the load balancer whose IPv4 is ip
// forwards to want, in any order.
func (e *env) eventuallyTargets(t *testing.T, ip, what string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	testkit.Eventually(t, 60*time.Second, what, func() error {
		lb, err := e.cloudLB(ip)
		if err != nil {
			return err
		}
		got, err := e.targetsOf(lb)
		if err != nil {
			return err
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("targets %v, want %v", got, want)
		}
		return nil
	})
}

// cloudLB is the one load balancer whose IPv4 is ip.
func (e *env) cloudLB(ip string) (*exampleapi.LoadBalancer, error) {
	all, err := e.api.ListLoadBalancers(testkit.Context(e.t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].IPv4 == ip {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("no load balancer with IPv4 %s among %d", ip, len(all))
}

// On both distributions (terraform and tofu).
func TestLoadBalancerService(t *testing.T) {
	t.Parallel()
	tftest.OnDistributions(t, testLoadBalancerService)
}

func testLoadBalancerService(t *testing.T, tc tftest.Toolchain) {
	e := newEnv(t, options{tc: tc})
	e.addNode("node-a", "ex-west-1a")
	services := e.kube.CoreV1().Services("default")

	_, err := services.Create(testkit.Context(t), lbService("web", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	svc := e.waitIngress("web", 60*time.Second)
	ip := svc.Status.LoadBalancer.Ingress[0].IP
	lb, err := e.cloudLB(ip)
	testkit.Must(t, err)
	if len(lb.Listeners) != 1 || lb.Listeners[0].Port != 80 || lb.Listeners[0].TargetPort != int(svc.Spec.Ports[0].NodePort) {
		t.Fatalf("listeners %+v for ports %+v", lb.Listeners, svc.Spec.Ports)
	}
	if !slices.Contains(svc.Finalizers, "service.kubernetes.io/load-balancer-cleanup") {
		t.Fatalf("finalizers %v", svc.Finalizers)
	}

	// Changing the ports updates the listeners in place.
	svc.Spec.Ports = append(svc.Spec.Ports, v1.ServicePort{Name: "https", Protocol: v1.ProtocolTCP, Port: 443})
	_, err = services.Update(testkit.Context(t), svc, metav1.UpdateOptions{})
	testkit.Must(t, err)
	testkit.Eventually(t, 60*time.Second, "second listener", func() error {
		lb, err := e.cloudLB(ip)
		if err != nil {
			return err
		}
		if len(lb.Listeners) != 2 {
			return fmt.Errorf("listeners %+v", lb.Listeners)
		}
		return nil
	})

	// A node joins: it becomes a target once initialised.
	e.addNode("node-b", "ex-west-1b")
	e.eventuallyTargets(t, ip, "targets follow nodes", e.instance("node-a").ID, e.instance("node-b").ID)

	// The node leaves: it is no longer a target.
	testkit.Must(t, e.kube.CoreV1().Nodes().Delete(testkit.Context(t), "node-b", metav1.DeleteOptions{}))
	e.eventuallyTargets(t, ip, "targets follow a node leaving", e.instance("node-a").ID)

	// Deleting the Service destroys the LB, removes the finalizer and the state.
	testkit.Must(t, services.Delete(testkit.Context(t), "web", metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, "web", services.Get)
	if _, err := e.api.GetLoadBalancer(testkit.Context(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("LB %s survived the Service: %v", lb.ID, err)
	}
	// The cluster's target pools stay (other Services may use them).
	if entries, _ := os.ReadDir(e.stateDir); slices.ContainsFunc(entries, func(en os.DirEntry) bool { return strings.Contains(en.Name(), "-service-") }) {
		t.Fatalf("state left after delete: %v", entries)
	}
	entries, _ := os.ReadDir(e.workDir)
	for _, en := range entries {
		if strings.Contains(en.Name(), "service-default-web") {
			t.Fatalf("workspace %s left after delete", en.Name())
		}
	}
}

// stateSecret is the kubernetes backend's state Secret of Service ns/name
// (nil when there is none).
func (e *env) stateSecret(ns, name string) (*v1.Secret, error) {
	l, err := e.kube.CoreV1().Secrets(namespace).List(testkit.Context(e.t), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	prefix := "tfstate-default-e2e-service-" + ns + "-" + name + "-"
	for i := range l.Items {
		if strings.HasPrefix(l.Items[i].Name, prefix) {
			return &l.Items[i], nil
		}
	}
	return nil, nil
}

// The kubernetes backend keeps each state in a Secret of the real
// apiserver, written with the CCM's own (RBAC-limited) identity.
func TestKubernetesStateBackend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{state: "kubernetes"})
	e.addNode("node-a", "ex-west-1a")
	services := e.kube.CoreV1().Services("default")
	_, err := services.Create(testkit.Context(t), lbService("kv", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.waitIngress("kv", 60*time.Second)
	e.checkRenders("default", "kv")
	secret := func() (*v1.Secret, error) { return e.stateSecret("default", "kv") }
	s, err := secret()
	if err != nil || s == nil {
		t.Fatalf("no state Secret: %v", err)
	}
	if len(s.Data["tfstate"]) == 0 {
		t.Fatalf("state Secret %s holds no tfstate", s.Name)
	}
	testkit.Must(t, services.Delete(testkit.Context(t), "kv", metav1.DeleteOptions{}))
	testkit.Eventually(t, 60*time.Second, "state Secret deleted", func() error {
		s, err := secret()
		if err != nil {
			return err
		}
		if s != nil {
			return fmt.Errorf("secret %s still there", s.Name)
		}
		return nil
	})
}

// Killing the CCM while terraform applies, then restarting it, converges
// with one load balancer: no duplicate, no orphan.
func TestCrashMidApplyConverges(t *testing.T) {
	testsize.SkipShort(t, "a controller killed mid-apply, its lock waited out")
	t.Parallel()
	e := newEnv(t, options{provisionDelay: 30 * time.Second})
	e.addNode("node-a", "ex-west-1a")
	_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("crash", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	// Wait until the cloud has the LB (terraform is now waiting for it).
	testkit.Eventually(t, 60*time.Second, "LB being provisioned", func() error {
		l, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
		if err != nil || len(l) != 1 {
			return fmt.Errorf("%d LBs (%v)", len(l), err)
		}
		return nil
	})
	r := e.recordOf(t, "default", "crash")
	if r == nil || r.Applying == nil {
		t.Fatalf("the record during the apply: %+v; want the apply under way", r)
	}
	cut := r.Applying.Plan.ID
	e.killCCM(e.ccm)
	e.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 100})
	e.startCCM()
	svc := e.waitIngress("crash", 90*time.Second)
	// The apply the kill cut short is on record: the restarted
	// controller's plan settles it (docs/review.md#an-apply-cut-short).
	if r := e.recordOf(t, "default", "crash"); r.Applying != nil || r.Find(cut) == nil || r.Find(cut).Outcome != records.Interrupted {
		t.Fatalf("the record after the restart: %+v", r)
	}
	if !slices.ContainsFunc(e.auditEntries(t), func(a auditEntry) bool {
		return a.Action == "apply" && a.Outcome == "interrupted" && a.PlanID == cut
	}) {
		t.Fatalf("no audit line of %s interrupted", cut)
	}
	all, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	if len(all) != 1 || all[0].IPv4 != svc.Status.LoadBalancer.Ingress[0].IP {
		t.Fatalf("after restart: %d LBs %+v, ingress %v", len(all), all, svc.Status.LoadBalancer.Ingress)
	}
}
